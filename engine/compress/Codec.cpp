#include "engine/compress/Codec.h"
#include "engine/compress/CodecList.h"
#include "engine/compress/TensorKernels.h"
#include "engine/errors/DivergedError.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/KernelError.h"

#include <torch/torch.h>

namespace ps {

std::unique_ptr<Codec> makeCodec(const CompressionOptions& o, const CodecContext& c) {
  std::unique_ptr<Codec> codec;
  CodecList::named(o.method, [&](auto entry) { codec = decltype(entry)::make(o, c); });
  if (!codec)
    throw ConfigError("unknown compression method '" + o.method + "' (known: " +
                      [] {
                        std::string s;
                        for (const auto& n : catalogue::names(catalogue::codecs())) s += (s.empty() ? "" : ", ") + n;
                        return s;
                      }() +
                      ")");
  return codec;
}

torch::Tensor cpuFloat(const torch::Tensor& x) { return x.detach().to(torch::kCPU, torch::kFloat32).contiguous(); }

namespace {

void checkHeader(const PayloadHeader& h, CodecId expected, const std::vector<int64_t>* expectedShape) {
  if (h.codec != expected)
    throw PayloadError("codec id " + std::to_string(int(h.codec)) + " where " + std::to_string(int(expected)) +
                       " was expected; both ends must use the same compression settings");
  if (expectedShape && h.shape != *expectedShape)
    throw PayloadError("shape " + shapeText(h.shape) + " where the receiver expects " + shapeText(*expectedShape));
}

}  // namespace

namespace {

[[noreturn]] void refuseNonFiniteOfShape(const std::vector<int64_t>& shape) {
  throw DivergedError("a tensor of shape " + shapeText(shape) +
                      " to be sent holds values that are not finite (inf or NaN)");
}

}  // namespace

void Codec::refuseNonFinite(const torch::Tensor& x) {
  refuseNonFiniteOfShape(x.sizes().vec());
}

std::function<void()> Codec::nonFiniteRefusal(const torch::Tensor& x) {
  return [shape = x.sizes().vec()] { refuseNonFiniteOfShape(shape); };
}

std::function<void()> Codec::nonFiniteValue() {
  return [] { throw PayloadError("a value is not finite"); };
}

Payload Codec::encode(const torch::Tensor& input) {
  // One rule for every codec: a payload carries at least one element (its header has no empty dimension), so an
  // empty tensor is refused here, saying so, rather than written as a payload no decoder would take.
  if (input.numel() == 0)
    throw std::invalid_argument("an empty tensor (shape " + shapeText(input.sizes().vec()) +
                                ") cannot be encoded: a payload carries at least one element");
  const bool inPlace = input.is_cuda() && (encodesOnDevice() || keepsTail(input)) && TensorKernels::usable(input);
  const torch::Tensor x = inPlace ? input.detach().to(torch::kFloat32).contiguous() : cpuFloat(input);
  // One rule for every codec: non-finite values never travel. At the sender they are the run's divergence; in a
  // payload they can only be malformed, and every decoder refuses them.
  if (!findsNonFinite()) requireAllFinite(x, nonFiniteRefusal(x));
  Payload p;
  PayloadHeader h;
  h.codec = id_;
  h.shape = x.sizes().vec();
  h.writeTo(p.bytes);
  p.values = uint64_t(x.numel());
  ByteWriter w(p.bytes);
  encodeBody(x, p, w);
  return p;
}

torch::Tensor Codec::decode(const HeadedPayload& headed, const torch::Device& device,
                            const std::vector<int64_t>* expected) {
  const Payload& p = headed.payload;
  const PayloadHeader& h = headed.header;
  checkHeader(h, id_, expected);
  // A tail is read where it is when this codec reads tails and the receiver is the same kind of device (a peer GPU
  // copies it over); otherwise the whole payload is gathered on the host and decoded as it would have arrived (the
  // tail goes after the body's start: the header read stands).
  if (p.tail.defined() && !(keepsTails() && p.tail.is_cuda() == device.is_cuda())) {
    Payload whole = p;
    whole.gather();
    return decode(HeadedPayload(whole, headed), device, expected);
  }
  ByteReader r(p.bytes, headed.body);
  struct TailScope {  // the tail is this call's only
    torch::Tensor& slot;
    ~TailScope() { slot = torch::Tensor(); }
  } scope{tail_};
  tail_ = p.tail;
  torch::Tensor out;
  try {
    out = decodeBody(h, r, device);
  } catch (const kernels::KernelError& e) {
    throw PayloadError(e.what());
  }
  r.expectEnd();
  return onDevice(out, device);
}

torch::Tensor Codec::outputTensor(c10::IntArrayRef shape) {
  const int64_t numel = c10::multiply_integers(shape);
  if (!output_.defined() || output_.numel() != numel || output_.storage().use_count() != 1)
    output_ = torch::empty({numel}, torch::kFloat32);
  return output_.detach().view(shape);
}

torch::Tensor onDevice(torch::Tensor cpu, const torch::Device& device) {
  return device.is_cpu() ? cpu : cpu.to(device);
}

}  // namespace ps
