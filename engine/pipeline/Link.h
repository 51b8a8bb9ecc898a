#pragma once
// One stage boundary: carries activations forward and activation gradients backward as encoded payloads,
// counts raw and wire bytes, measures codec time and compression error, and models the network's time.
#include "engine/compress/AdaptiveSender.h"
#include "engine/compress/Compensation.h"
#include "engine/core/LinkModel.h"
#include "engine/core/StepTrace.h"
#include "engine/core/Telemetry.h"
#include "engine/pipeline/Channel.h"

#include <array>
#include <memory>
#include <optional>
#include <vector>

namespace ps {

class Link {
 public:
  struct Settings {
    CompressionOptions forward, backward;
    CodecContext context;  // seed; boundary and direction are filled in by the link
    AqsgdOptions aqsgd;
    // The per-message figures (compression errors, Accordion's norms, a bottleneck's reconstruction error) stay on
    // the sending stage's device and are read once per step, by takeTraffic, instead of as each message is sent.
    bool deferReads = false;
    // The stream discipline's check mode (engine/pipeline/StageStream.h): every send and receive must run on its
    // stage's thread, and every message be read only after the receiving stage waited for its fence.
    bool streamCheck = false;
  };
  Link(int boundary, LinkModel model, const Settings& settings);

  // Sender thread. `clock` is the sender's emulated time when the tensor is ready; returns it after encoding. The
  // send (its encode time and bytes) is appended to `trace` when one is given.
  double send(Direction d, const torch::Tensor& x, double clock, const MessageMeta& meta = {},
              std::vector<TraceEvent>* trace = nullptr);
  // Receiver thread. Advances `clock` to the arrival time plus decode time; appends the receive to `trace`.
  torch::Tensor receive(Direction d, const torch::Device& device, double& clock, const MessageMeta& meta = {},
                        std::vector<TraceEvent>* trace = nullptr);
  // Evaluation through the codec alone: no statistics, no compensation state.
  torch::Tensor roundTrip(Direction d, const torch::Tensor& x);
  // Evaluation whose two ends are in different processes: x crosses this direction's channel (the stream to the
  // other process, behind the step's messages, all of which are taken by then) as the payload of that codec, or as
  // float32 when not `compressed`; the receiver decodes it with its own twin (both ends follow the same commands and
  // decisions) and checks it against `shape` like any payload from another process. No statistics, no compensation
  // state, nothing on the emulated clock. The sender does not wait for the receiver.
  void sendEvaluation(Direction d, const torch::Tensor& x, bool compressed);
  torch::Tensor receiveEvaluation(Direction d, const torch::Device& device, const std::vector<int64_t>& shape,
                                  bool compressed);

  // Between steps only (no worker is running).
  // Asks for a histogram of the values of the next step's first message in each direction.
  void armHistograms(int bins, int64_t step);
  std::vector<HistogramRecord> takeHistograms();
  // Keeps a float32 copy, on the CPU, of each direction's next `messages` inputs before compression (what the
  // compression planner measures candidate codecs on), until armSamples(0); takeSamples hands a direction's over.
  void armSamples(int messages);
  std::vector<torch::Tensor> takeSamples(Direction d);
  LinkTraffic takeTraffic(Direction d);
  // Adaptive compression (engine/compress/Adaptive.h), between steps only. A direction whose controller keeps
  // compressors of its own sends through the sender its registry entry makes (GraVAC: its measurements are in
  // LinkTraffic::measures); applyDecision hands that sender the controller's decision, keeping its residuals,
  // and makes `options(d).k` the factor sent. measureNorm: the squared norm of what is sent (Accordion).
  void applyDecision(Direction d, const AdaptDecision& decision);
  void measureNorm(Direction d, bool on) { side(d).measureNorm = on; }
  // Replaces a direction's compressor, between steps only. Where the options keep the compensation state
  // (CompressionOptions::keepsCompensationOf: a new K, bits or rounding, or Accordion's switch) both ends keep it;
  // otherwise both start afresh, and the return value says whether state was dropped (a reset to report).
  bool setOptions(Direction d, const CompressionOptions& options);
  const CompressionOptions& options(Direction d) const { return side(d).options; }
  std::string describe(Direction d) const {
    return side(d).adaptive ? side(d).adaptive->describe() : side(d).sender->describe();
  }
  void setModel(const LinkModel& model) { model_ = model; }
  // The interface a direction's sending stage sends through, shared with that stage's other direction: with
  // LinkModel::shared_egress both queue for it. Set once, before the first step; sender thread only after that.
  struct Egress {
    double busy_until = 0;  // emulated time the interface is free again
    std::chrono::steady_clock::time_point wall_busy_until{};
  };
  void shareEgress(Direction d, std::shared_ptr<Egress> egress) { side(d).stageEgress = std::move(egress); }
  const LinkModel& model() const { return model_; }
  int boundary() const { return boundary_; }
  // How many values of the uncompressed link each value crossing stands for, in both directions: features / width
  // where a learned bottleneck's code crosses instead of the activation (raw bytes count what the link would carry
  // without it). Between steps only (a bottleneck's width may change mid-run).
  void setRawScale(double scale) { rawScale_ = scale; }
  // Sender thread, after a send: the squared error and squared norm (0-dim tensors on the sending stage's device) of
  // what the receiving stage continues from against the activation a learned bottleneck's code stood for, measured on
  // the side. A step's relative error is then theirs (the codec's own error on the code stays the compensated one).
  void addReconstruction(Direction d, const torch::Tensor& errSq, const torch::Tensor& refSq);
  bool lossless() const;

  // Multi-process runs: a direction whose other end lives in another process exchanges its messages there.
  // A sender on a GPU leaves its payloads' bulk on the device (Codec::Residence::Device) for a receiver in this
  // process or behind an end that carries device memory (NCCL): the receiver takes it device to device.
  void connectRemote(Direction d, std::shared_ptr<RemoteEnd> end);

  void abort();  // wakes waiting receivers with PipelineAborted
  void reset();  // between steps: drop queued messages, clear the abort

 private:
  struct Side {
    CompressionOptions options;
    std::unique_ptr<Compensator> sender, receiver;  // the two ends' state, each touched by one thread
    std::unique_ptr<AdaptiveSender> adaptive;       // sends instead of `sender` when the controller has its own
    std::unique_ptr<Codec> eval;                    // stateless twin for evaluation
    std::unique_ptr<Codec> plain;                   // float32, for evaluation between processes without compression
    Channel channel;
    bool hostOnly = false;  // the receiver is behind an end that carries host bytes only (Gloo)
    bool remote = false;    // the other end is in another process
    // Written by the sender thread only.
    uint64_t raw = 0, wire = 0, elements = 0;
    uint32_t messages = 0;
    double encode_s = 0, modelled_s = 0;
    SendReport report;
    std::vector<std::string> resets;
    Egress own;                                // this direction's own wire
    std::shared_ptr<Egress> stageEgress;       // its sending stage's interface (shared_egress)
    std::optional<HistogramRecord> histogram;  // values before compression (sender thread)
    std::optional<HistogramRecord> decoded;    // what the receiver uses (receiver thread)
    std::vector<torch::Tensor> samples;        // inputs kept for armSamples (sender thread)
    bool measureNorm = false;  // Accordion (sender thread)
    double normSquared = 0;
    double reconstructionErr = 0, reconstructionRef = 0;  // a learned bottleneck's (sender thread)
    // Deferred reads (Settings::deferReads): normSquared, reconstructionErr and reconstructionRef not yet read, as
    // float64 sums on the sending stage's device (sender thread).
    torch::Tensor pending;
    // Written by the receiver thread only.
    double decode_s = 0;
  };
  Side& side(Direction d) { return sides_[static_cast<int>(d)]; }
  const Side& side(Direction d) const { return sides_[static_cast<int>(d)]; }

  CodecContext contextOf(Direction d) const;
  // The stage that sends in direction d and the one that receives; "link 1 forward: send", for errors.
  int senderOf(Direction d) const { return d == Direction::Forward ? boundary_ : boundary_ + 1; }
  int receiverOf(Direction d) const { return d == Direction::Forward ? boundary_ + 1 : boundary_; }
  std::string operation(Direction d, const char* what) const;
  // Check mode: the fence of a message this process's sending stage made, waited for by the receiving stage.
  void checkFence(Direction d, const Fence& fence) const;
  // Adds figures to a side's own (normSquared, reconstructionErr, reconstructionRef, in that order), at once or,
  // deferring, to its pending sums; an undefined tensor adds nothing.
  void addFigures(Side& s, const std::array<torch::Tensor, 3>& figures);
  // Reads a side's deferred sums, its compensator's and its own, in one transfer.
  void settleFigures(Side& s);
  void build(Direction d, const CompressionOptions& options);
  void buildEval(Direction d);

  int boundary_;
  LinkModel model_;
  Settings settings_;
  int histogramBins_ = 0;
  int64_t histogramStep_ = 0;
  int samplesWanted_ = 0;
  double rawScale_ = 1;
  std::array<Side, 2> sides_;
};

}  // namespace ps
