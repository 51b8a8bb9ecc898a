#pragma once
// The weight gradients of one stage's data-parallel replicas (docs/algorithms.md, data-parallel exchange): after the
// backward passes of a step every replica of the stage calls reduce() together, and every replica ends with the
// same mean gradient.
//  - Lossless (method none, no feedback): a dense float32 all-reduce.
//  - PowerSGD (with error feedback or none): as PyTorch's DDP hook, three all-reduces of shared factors
//    (engine/pipeline/PowerSgdReducer.h); wire bytes do not grow with the replicas.
//  - Anything else: every replica compresses each parameter tensor's gradient with its own compensator (per-replica
//    and per-tensor error feedback for TopK-SGD and friends: small layers are not starved by large ones), the
//    messages are all-gathered (their sizes may differ, as GaussianK's counts do), and every replica decodes all of
//    them in replica order with one receiver per peer, so stateful compensation (EF21, DIANA) keeps both ends of
//    every pair in step and the replicas stay bit-identical.
// Telemetry is one LinkTraffic per step (direction Gradients, boundary = the stage): wire bytes are what this
// replica sent to its peers; raw bytes what a dense ring all-reduce would send, 2 (R-1)/R x 4 bytes per element.
// The emulated clock continues from the slowest replica's and adds the modelled exchange: a ring all-gather of
// R-1 rounds of the largest payload, or a ring all-reduce of 2 rounds of 1/R of the tensor.
#include "engine/compress/AdaptiveSender.h"
#include "engine/compress/Compensation.h"
#include "engine/core/LinkModel.h"
#include "engine/core/StepTrace.h"
#include "engine/core/Telemetry.h"
#include "engine/dist/Cluster.h"
#include "engine/dist/nccl/NcclGroup.h"
#include "engine/pipeline/GradientMessage.h"
#include "engine/pipeline/PowerSgdReducer.h"

#include <memory>
#include <vector>

namespace ps {

class GradientExchange {
 public:
  // `nccl`: a dense all-reduce of CUDA gradients goes through NCCL on the device (engine/dist/nccl) instead of
  // through the replicas' streams on a host copy.
  GradientExchange(std::shared_ptr<Cluster> cluster, int stage, const CompressionOptions& options, uint64_t seed,
                   LinkModel model, bool nccl = false);
  ~GradientExchange();

  // Stage thread: replaces the gradients of `params` with the replicas' mean; advances the emulated clock and
  // appends the exchange to `trace` when one is given.
  void reduce(const std::vector<torch::Tensor>& params, double& clock, std::vector<TraceEvent>* trace = nullptr);

  // Between steps. A new K, bits or rounding keeps every end's compensation state
  // (CompressionOptions::keepsCompensationOf); another compensation or codec family starts afresh, reported as a reset.
  void setOptions(const CompressionOptions& options);
  const CompressionOptions& options() const { return options_; }
  std::string describe() const { return adaptive_ ? adaptive_->describe() : sender_->describe(); }
  void setModel(const LinkModel& model) { model_ = model; }
  // A controller with compressors of its own (GraVAC): its decision goes to the sender its registry entry made,
  // and options().k becomes the factor sent. Accordion: the squared norm of every replica's gradient, in
  // LinkTraffic::measures.
  void applyDecision(const AdaptDecision& decision);
  void measureNorm(bool on) { measureNorm_ = on; }
  LinkTraffic takeTraffic();

 private:
  CodecContext contextOf(int replica) const;
  // The parts of reduce(): the CPU copy of the gradients, the two ways to sum them, and the mean written back.
  void gatherGradients(const std::vector<torch::Tensor>& params, int64_t n);
  torch::Tensor reduceDense(const std::vector<torch::Tensor>& params, int64_t n, bool onDevice, double& clock,
                            std::vector<TraceEvent>* trace);
  torch::Tensor reduceCompressed(const std::vector<torch::Tensor>& params, int64_t n, double& clock,
                                 std::vector<TraceEvent>* trace);
  torch::Tensor reduceLowRank(const std::vector<torch::Tensor>& params, double& clock, std::vector<TraceEvent>* trace);
  static bool allReducesLowRank(const CompressionOptions& o);
  double slowestClock(double clock) const;  // the latest of the replicas' clocks (an all-gather)
  double ringSeconds(int64_t n) const;      // the modelled ring all-reduce of n float32 values
  void encodeAll(const std::vector<torch::Tensor>& params, GradientMessageWriter& message);  // this replica's
  uint64_t ringBytes(int64_t n) const;  // what a dense float32 ring all-reduce of n values sends per replica
  // Adds replica j's decoded gradients to sum_ (its bytes are untrusted); `start` becomes the latest clock seen.
  void decodeFrom(int replica, const std::vector<uint8_t>& bytes, const std::vector<torch::Tensor>& params,
                  double& start);
  static void scatterMean(const std::vector<torch::Tensor>& params, const torch::Tensor& mean);

  std::shared_ptr<Cluster> cluster_;
  int stage_;
  CompressionOptions options_;
  uint64_t seed_;
  LinkModel model_;
  std::unique_ptr<Compensator> sender_;
  std::unique_ptr<AdaptiveSender> adaptive_;             // sends instead of sender_ when the controller has compressors
  std::vector<std::unique_ptr<Compensator>> receivers_;  // one per replica, this one included
  std::unique_ptr<PowerSgdReducer> lowRank_;             // PowerSGD as all-reduces, in place of the above
  bool measureNorm_ = false;
  double normSquared_ = 0;
  torch::Tensor flat_, sum_, local_;  // reused every step
  bool useNccl_ = false;
  std::unique_ptr<NcclGroup> nccl_;  // created at the first CUDA all-reduce
  // This step so far.
  uint64_t raw_ = 0, wire_ = 0, elements_ = 0, nonzeros_ = 0;
  uint32_t messages_ = 0;
  double encode_s_ = 0, decode_s_ = 0, modelled_s_ = 0;
  SendReport report_;
  std::vector<std::string> resets_;
};

}  // namespace ps
