#pragma once
// A codec turns a tensor into a payload of real bytes and back. Small and strategy-shaped:
// error compensation and links wrap codecs; they never look inside one.
#include "engine/compress/ByteIo.h"
#include "engine/compress/Payload.h"
#include "engine/compress/spec/CompressionOptions.h"
#include "engine/errors/ConfigError.h"

#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>

namespace ps {

// Where a codec works: randomness (stochastic rounding, RandK) derives from the run seed and the link.
struct CodecContext {
  uint64_t seed = 0;
  int boundary = 0;
  int direction = 0;
  uint64_t stream() const { return seed * 0x9E3779B97F4A7C15ULL + uint64_t(boundary) * 131 + uint64_t(direction); }
};

// A codec writes its body after a header naming it and the tensor's shape; the base class does what every codec
// would repeat: the float32 contiguous view of the input (on the CPU, or where it is for a codec that encodes on a
// GPU), the check for non-finite values, the header, and on the way back the header's checks, a bounds-checked reader
// over the body, the check that nothing trails it, kernel errors reported as malformed payloads and the move to the
// device.
class Codec {
 public:
  virtual ~Codec() = default;
  // Encodes a float tensor of any shape. A codec that encodesOnDevice() works on a CUDA tensor where it is and only the
  // payload comes to the host; every other input is copied to the CPU as float32 first. The bytes are the same either
  // way.
  Payload encode(const torch::Tensor& x);
  // Validates the payload (untrusted input) and decodes it onto `device`. `expected`: the shape the receiver waits
  // for (links and the gradient exchange know it); a payload declaring another shape is refused before any of its
  // body is read or anything is allocated. Without it only the header's own limits apply (kMaxElements).
  torch::Tensor decode(const Payload& payload, const torch::Device& device,
                       const std::vector<int64_t>* expected = nullptr) {
    return decode(HeadedPayload(payload), device, expected);
  }
  // The same for a payload whose header was read already.
  torch::Tensor decode(const HeadedPayload& payload, const torch::Device& device,
                       const std::vector<int64_t>* expected = nullptr);
  virtual std::string describe() const = 0;
  // The payload id its headers carry (its entry's).
  CodecId id() const { return id_; }
  // Where a payload's bulk waits for its receiver. Host: all of it in Payload::bytes, the only form that may leave
  // this process. Device: a codec that can keeps the bulk of a CUDA input on its device (Payload::tail) and encodes
  // there, so a receiver in this process gets it by a device-to-device copy and decodes it on its own device; the
  // bytes are the same. Always: the same for an input anywhere, the CPU included (tests run the tail path there).
  enum class Residence { Host, Device, Always };
  void setResidence(Residence r) { residence_ = r; }
  // True when decode(encode(x)) == x exactly, so error measurement can be skipped.
  virtual bool lossless() const { return false; }
  // The variance bound omega of an unbiased codec for a tensor of this shape (E|D(C(x)) - x|^2 <= omega |x|^2 for
  // every x), or -1 when biased or unknown; DIANA's default step is 1 / (omega + 1).
  virtual double omega(c10::IntArrayRef /*shape*/) const { return -1; }

 protected:
  explicit Codec(CodecId id) : id_(id) {}
  // The body of x (float32, contiguous; on the CPU unless encodesOnDevice(), then possibly on a CUDA device
  // TensorKernels can use) after the header; `p.values` is x's size unless set here.
  virtual void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) = 0;
  // True when encodeBody takes its input on a CUDA device (through TensorKernels) for these settings.
  virtual bool encodesOnDevice() const { return false; }
  // True when this codec can leave its bulk in Payload::tail at all (its encodeBody checks keepsTail(x), and its
  // decodeBody reads tail() when it is defined).
  virtual bool keepsTails() const { return false; }
  // True when encodeBody should leave x's bulk where x is, in Payload::tail.
  bool keepsTail(const torch::Tensor& x) const {
    return keepsTails() && (residence_ == Residence::Always || (residence_ == Residence::Device && x.is_cuda()));
  }
  // During decodeBody: the payload's tail on the decoding device's kind (undefined when it has none). Checked as
  // bytes are (sizes, codes, indices, finite values): a tail may come from another process over NCCL.
  const torch::Tensor& tail() const { return tail_; }
  // True when encodeBody refuses non-finite input itself, through refuseNonFinite, because its own work shows it
  // for less than a pass over the whole tensor; encode() then skips that pass.
  virtual bool findsNonFinite() const { return false; }
  [[noreturn]] static void refuseNonFinite(const torch::Tensor& x);
  // The same refusal as a check's failure (requireAllFinite in TensorKernels.h), holding x's shape only: a deferred
  // check fails after x may be gone.
  static std::function<void()> nonFiniteRefusal(const torch::Tensor& x);
  // A decoder's failure when a decoded value is not finite.
  static std::function<void()> nonFiniteValue();
  // The tensor of the body's values, shaped as the header says: on `device` when the codec rebuilds it there from its
  // compact form (decodesOnDevice), else on the CPU and the base class moves it. Reading past the end, kernel errors
  // and trailing bytes are the base class's to report.
  virtual torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) = 0;
  // The float32 CPU tensor a decoder writes into: the previous call's buffer when nothing outside this codec
  // still holds its storage and the element count matches (fresh large allocations page-fault on every call,
  // which costs more than the decode itself), otherwise a new one. Callers get their own TensorImpl, so flags
  // they set on it (requires_grad) never come back with the buffer.
  torch::Tensor outputTensor(c10::IntArrayRef shape);

 private:
  CodecId id_;
  Residence residence_ = Residence::Host;
  torch::Tensor output_, tail_;
};

// The id an entry's payloads carry in their header: its spec's, the one place it is written.
template <class Entry>
CodecId payloadOf() {
  static const CodecId id = CodecId(Entry::spec().payload);
  return id;
}

// Builds the codec the options name. Throws ConfigError for combinations that make no sense.
std::unique_ptr<Codec> makeCodec(const CompressionOptions& options, const CodecContext& context = {});
inline std::unique_ptr<Codec> makeCodec(const std::string& method) {
  CompressionOptions o;
  o.method = method;
  return makeCodec(o);
}

// Shared by codecs: the float32 CPU contiguous view of x.
torch::Tensor cpuFloat(const torch::Tensor& x);
torch::Tensor onDevice(torch::Tensor cpu, const torch::Device& device);

}  // namespace ps
