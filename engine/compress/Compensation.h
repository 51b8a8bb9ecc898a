#pragma once
// Error compensation around a codec, as two halves: the sender's state and the receiver's state of one link
// direction (docs/algorithms.md): none, EF, EF21, DIANA, Rand-DIANA and AQ-SGD. Each half lives on its own thread.
#include "engine/compress/Codec.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ps {

// What travels beside a tensor: which micro-batch slot it fills and, for AQ-SGD, which samples it holds.
struct MessageMeta {
  int slot = 0;                                 // micro-batch index within the step
  const std::vector<int64_t>* samples = nullptr;  // data-loader sample ids (AQ-SGD)
  int64_t epoch = 0;
};

struct AqsgdOptions {
  int64_t warmup_epochs = 1;
  int64_t samples = 0;  // training samples, sizes the buffers
};

// Per message measurements of the sender.
struct SendReport {
  double err_num = 0, err_den = 0;          // |x_used - x|^2, |x|^2: what the receiver uses against the truth
  double comp_num = 0, comp_den = 0;        // |D(C(p)) - p|^2, |p|^2: the codec's error on its actual input
  double out_norm = 0;                      // sum of |D(C(p))| over messages, when measured (measureOutput)
  uint64_t values = 0;                      // values the payload carries
  std::string reset;                        // non-empty: state was reset, and why
};

class Compensator {
 public:
  Compensator(const CompressionOptions& options, const CodecContext& context, const AqsgdOptions& aqsgd);
  // Sender side: compresses x (updating the sender's state) and reports the error.
  Payload send(const torch::Tensor& x, const MessageMeta& meta, SendReport& report);
  // Receiver side: decodes (updating the receiver's state) and returns what the receiver uses.
  torch::Tensor receive(const Payload& payload, const torch::Device& device, const MessageMeta& meta);
  std::string describe() const;
  // Replaces the codec (a new K, say) and keeps the compensation state: an error-feedback residual or a shift
  // belongs to the link, not to the codec that produced it. `options.feedback` must be this compensator's.
  void retarget(const CompressionOptions& options);
  // Also sums |D(C(p))| into SendReport::out_norm (one more pass over each message; GraVAC's gains need it).
  void measureOutput(bool on) { measureOutput_ = on; }
  bool lossless() const { return feedback_ == "none" && codec_->lossless(); }
  Codec& codec() { return *codec_; }
  // Bytes the AQ-SGD buffers of one end need for `samples` samples of `elements` values each.
  static double aqsgdBytes(int64_t samples, int64_t elements) { return double(samples) * double(elements) * 2.0; }

 private:
  torch::Tensor& slotState(int slot, const torch::Tensor& like, std::string& reset);
  double alphaFor(c10::IntArrayRef shape) const;
  bool fullThisTime();  // Rand-DIANA's coin, shared by both ends through the seed
  // AQ-SGD: (re)allocates the buffers for activations of `perSample` values; true when old ones were dropped.
  bool ensureBuffers(int64_t perSample);
  // AQ-SGD: stores what the receiver uses as the samples' new buffers.
  void remember(const std::vector<int64_t>& samples, const torch::Tensor& ids, const torch::Tensor& used);

  CompressionOptions options_;
  CodecContext context_;
  std::string feedback_;
  std::unique_ptr<Codec> codec_, identity_;
  AqsgdOptions aqsgd_;
  uint64_t coinSeed_, coins_ = 0;
  std::map<int, torch::Tensor> state_;  // per micro-batch slot: e (EF), g (EF21), h (DIANA)
  torch::Tensor buffers_;               // AQ-SGD: [samples, elements] fp16
  std::vector<uint8_t> filled_;         // AQ-SGD: which samples have a buffer
  bool measureOutput_ = false;
  uint64_t retargets_ = 0;
};

}  // namespace ps
