#pragma once
// Error compensation around a codec, as two halves: the sender's state and the receiver's state of one link
// direction (docs/algorithms.md): none, EF, EF21, DIANA, Rand-DIANA and AQ-SGD. Each half lives on its own thread, and
// its state on its stage's device: on a GPU nothing but the payload crosses to the host.
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
  const std::vector<int64_t>* shape = nullptr;  // receiver: the shape it waits for (checked before decoding)
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
  // Deferred reads, set by the report's owner, who then calls settle() before it reads the figures above: each
  // message's sums are added on its device to `pending` (err_num, err_den, comp_num, comp_den, out_norm, float64)
  // instead of being read at once, so that a GPU stage does not wait for its device once per message.
  bool deferred = false;
  torch::Tensor pending;
};

// Adds a deferred report's pending sums to its figures (one transfer from the device) and clears them.
void settle(SendReport& report);

class Compensator;

// What a rule's send made besides the payload: what the receiver will use, and the codec's actual input with what
// decoding its payload gives (both undefined when the codec was not used, as for a tensor sent whole). The
// compensator measures the message's errors from them, all at once.
struct SentTensors {
  torch::Tensor used, codecInput, codecOutput;
};

// Adds a message's figures to `report`: ||used - x||^2 and ||x||^2, the codec's ||output - input||^2 and ||input||^2
// where it was used, and ||used|| when `output` asks for it. The sums stay on the tensors' device until one transfer
// reads them all: on a GPU, one wait for the device per message rather than one per figure, and none at all for a
// deferred report (SendReport::deferred), whose owner reads every message's at once.
void measureSent(const torch::Tensor& x, const SentTensors& sent, bool output, SendReport& report);

// One error compensation's algorithm (engine/compress/CompensationList.h registers them): what the sender sends for
// x and what the receiver uses for a payload. The state it works on (residuals, shifts, AQ-SGD's buffers, the codec)
// belongs to the Compensator, so that a new codec (a new K) keeps it.
class CompensationRule {
 public:
  virtual ~CompensationRule() = default;
  // Sender: the payload for x (float32, contiguous, on the sending stage's device, where its state lives too); fills
  // `sent` (on that device) and, when it dropped state, `report.reset`.
  virtual Payload send(Compensator& c, const torch::Tensor& x, const MessageMeta& meta, SendReport& report,
                       SentTensors& sent) = 0;
  // Receiver: what it uses, on `device` (the receiving stage's, where its state lives). `whole`: the payload is a
  // whole uncompressed tensor.
  virtual torch::Tensor receive(Compensator& c, const HeadedPayload& payload, bool whole, const MessageMeta& meta,
                                const torch::Device& device) = 0;
};

class Compensator {
 public:
  Compensator(const CompressionOptions& options, const CodecContext& context, const AqsgdOptions& aqsgd);
  ~Compensator();
  // Sender side: compresses x (updating the sender's state) and reports the error; a lossless codec with no
  // compensation sends x as it is and measures nothing.
  Payload send(const torch::Tensor& x, const MessageMeta& meta, SendReport& report);
  // Receiver side: decodes (updating the receiver's state) and returns what the receiver uses.
  torch::Tensor receive(const Payload& payload, const torch::Device& device, const MessageMeta& meta);
  std::string describe() const;
  // Replaces the codec (a new K, say) and keeps the compensation state: an error-feedback residual or a shift
  // belongs to the link, not to the codec that produced it. `options.feedback` must be this compensator's.
  void retarget(const CompressionOptions& options);
  // Also sums |D(C(p))| into SendReport::out_norm (one more pass over each message; GraVAC's gains need it).
  void measureOutput(bool on) { measureOutput_ = on; }
  // decode(encode(x)) == x and no state at either end.
  bool lossless() const { return stateless_ && codec_->lossless(); }
  // Where the payloads sent wait for their receiver (Codec::Residence), for this codec and the ones after a retarget.
  void setResidence(Codec::Residence r);
  // Bytes the AQ-SGD buffers of one end need for `samples` samples of `elements` values each.
  static double aqsgdBytes(int64_t samples, int64_t elements) { return double(samples) * double(elements) * 2.0; }

  // ---- for the rules (engine/compress/Compensation.cpp) ----
  Codec& codec() { return *codec_; }
  Codec& identity() { return *identity_; }
  // The state of one micro-batch slot (EF's residual, EF21's and DIANA's shift): zeros at first, and zeros again,
  // with `reset` saying why, when the tensor's shape changes.
  torch::Tensor& slotState(int slot, const torch::Tensor& like, std::string& reset);
  double alphaFor(c10::IntArrayRef shape) const;  // DIANA's step: alpha, else 1/(omega+1) of the codec
  bool fullThisTime();                            // Rand-DIANA's coin, shared by both ends through the seed
  // AQ-SGD: (re)allocates the buffers for activations of `perSample` values on `device`; true when old ones were
  // dropped.
  bool ensureBuffers(int64_t perSample, const torch::Device& device);
  // AQ-SGD: the buffers of these samples, shaped like `like`; whether every sample has one and warm-up is over.
  torch::Tensor buffered(const torch::Tensor& ids, c10::IntArrayRef like);
  bool warm(const MessageMeta& meta) const;
  // AQ-SGD: stores what the receiver uses as the samples' new buffers.
  void remember(const std::vector<int64_t>& samples, const torch::Tensor& ids, const torch::Tensor& used);

 private:
  CompressionOptions options_;
  CodecContext context_;
  std::string feedback_;
  std::unique_ptr<CompensationRule> rule_;
  bool stateless_ = false;  // no state at either end (none): the link may skip measuring and decode directly
  Codec::Residence residence_ = Codec::Residence::Host;
  std::unique_ptr<Codec> codec_, identity_;
  AqsgdOptions aqsgd_;
  uint64_t coinSeed_, coins_ = 0;
  std::map<int, torch::Tensor> state_;  // per micro-batch slot: e (EF), g (EF21), h (DIANA)
  torch::Tensor buffers_;               // AQ-SGD: [samples, elements] fp16, on the stage's device
  std::vector<uint8_t> filled_;         // AQ-SGD: which samples have a buffer
  bool measureOutput_ = false;
  uint64_t retargets_ = 0;
};

}  // namespace ps
