#include "engine/compress/Codec.h"
#include "engine/compress/DenseCodecs.h"
#include "engine/compress/IdentityCodec.h"
#include "engine/compress/SparseCodec.h"
#include "engine/kernels/KernelError.h"

#include <torch/torch.h>

namespace ps {

std::unique_ptr<Codec> makeCodec(const CompressionOptions& o, const CodecContext& c) {
  const std::string& m = o.method;
  if (m == "none") return std::make_unique<IdentityCodec>();
  if (m == "fp16" || (m == "quantize" && o.bits == 16)) return std::make_unique<HalfCodec>(false);
  if (m == "bf16") return std::make_unique<HalfCodec>(true);
  if (m == "quantize") return std::make_unique<QuantizeCodec>(o, c);
  if (m == "qsgd") return std::make_unique<QsgdCodec>(o, c);
  if (m == "sign") return std::make_unique<SignCodec>();
  if (o.sparse()) return std::make_unique<SparseCodec>(o, c);
  throw ConfigError("unknown compression method '" + m + "'");
}

torch::Tensor cpuFloat(const torch::Tensor& x) { return x.detach().to(torch::kCPU, torch::kFloat32).contiguous(); }

PayloadHeader readHeader(const Payload& p, CodecId expected, size_t& offset) {
  PayloadHeader h = PayloadHeader::read(p.bytes, offset);
  if (h.codec != expected)
    throw PayloadError("codec id " + std::to_string(int(h.codec)) + " where " + std::to_string(int(expected)) +
                       " was expected; both ends must use the same compression settings");
  return h;
}

Payload Codec::encode(const torch::Tensor& input) {
  const torch::Tensor x = cpuFloat(input);
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

torch::Tensor Codec::decode(const Payload& p, const torch::Device& device) {
  size_t offset = 0;
  const PayloadHeader h = readHeader(p, id_, offset);
  ByteReader r(p.bytes, offset);
  torch::Tensor out;
  try {
    out = decodeBody(h, r);
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
