#include "engine/compress/SignCodec.h"

#include "engine/compress/Codec.h"
#include "engine/kernels/BitPack.h"
#include "engine/kernels/Sign.h"

#include <torch/torch.h>

#include <cmath>
#include <cstring>

namespace ps {
namespace {

// Body: the float32 scale, then the n sign bits packed.
class SignCodec final : public Codec {
 public:
  SignCodec() : Codec(payloadOf<SignEntry>()) {}
  std::string describe() const override { return "sign"; }

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override {
    const uint64_t n = uint64_t(x.numel());
    p.bytes.reserve(p.bytes.size() + 4 + kernels::packedBytes(n, 1));
    const size_t at = p.bytes.size();
    w.put<float>(0.f);  // the scale, once the signs are packed
    const double l1 = kernels::signPack(x.data_ptr<float>(), n, w.grow(kernels::packedBytes(n, 1)));
    const float scale = n ? float(l1 / double(n)) : 0.f;
    std::memcpy(p.bytes.data() + at, &scale, 4);
  }

  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device&) override {
    const float scale = r.get<float>("scale");
    if (!std::isfinite(scale) || scale < 0) throw PayloadError("the sign scale is not a finite non-negative number");
    const uint64_t n = uint64_t(h.numel());
    const size_t bytes = kernels::packedBytes(n, 1);
    const uint8_t* bits = r.take(bytes, "sign bits");
    auto out = outputTensor(h.shape);
    kernels::signUnpack(bits, bytes, n, scale, out.data_ptr<float>());
    return out;
  }
};

}  // namespace

std::unique_ptr<Codec> SignEntry::make(const CompressionOptions&, const CodecContext&) {
  return std::make_unique<SignCodec>();
}

}  // namespace ps
