#include "engine/compress/HalfCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/TensorKernels.h"
#include "engine/compress/ValueCoding.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Half.h"

#include <torch/torch.h>

namespace ps {
namespace {

// Body: the n values as 16-bit halves (or, on a GPU, the same bytes in the payload's tail).
class HalfCodec final : public Codec {
 public:
  HalfCodec(bool bf16, CodecId id) : Codec(id), bf16_(bf16) {}
  std::string describe() const override { return bf16_ ? "bf16" : "fp16"; }

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // The halves can wait on the device: converted there (torch rounds to nearest even, as the CPU kernels do).
  bool keepsTails() const override { return true; }
  bool bf16_;
};

void HalfCodec::encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) {
  if (keepsTail(x)) {
    p.tail = halvesHere(x.reshape({-1}), bf16_).view(torch::kUInt8);
    return;
  }
  const size_t n = size_t(x.numel());
  auto* out = reinterpret_cast<uint16_t*>(w.grow(2 * n));
  bf16_ ? kernels::floatToBf16(x.data_ptr<float>(), n, out) : kernels::floatToHalf(x.data_ptr<float>(), n, out);
  kernels::saturateInfinities(out, n, bf16_);
}

torch::Tensor HalfCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) {
  const size_t n = size_t(h.numel());
  if (tail().defined()) {
    if (size_t(tail().numel()) != 2 * n)
      throw PayloadError("the tail has " + std::to_string(tail().numel()) + " bytes, the shape needs " +
                         std::to_string(2 * n));
    auto out = tail().to(device).view(bf16_ ? torch::kBFloat16 : torch::kHalf).to(torch::kFloat32);
    requireAllFinite(out, nonFiniteValue());
    return out.view(h.shape);
  }
  auto in = reinterpret_cast<const uint16_t*>(r.take(2 * n, "half values"));
  auto out = outputTensor(h.shape);
  bf16_ ? kernels::bf16ToFloat(in, n, out.data_ptr<float>()) : kernels::halfToFloat(in, n, out.data_ptr<float>());
  requireAllFinite(out, nonFiniteValue());
  return out;
}

}  // namespace

std::unique_ptr<Codec> Fp16Entry::make(const CompressionOptions&, const CodecContext&) {
  return std::make_unique<HalfCodec>(false, payloadOf<Fp16Entry>());
}
std::unique_ptr<Codec> Bf16Entry::make(const CompressionOptions&, const CodecContext&) {
  return std::make_unique<HalfCodec>(true, payloadOf<Bf16Entry>());
}

}  // namespace ps
