#include "engine/compress/IdentityCodec.h"

#include <torch/torch.h>

#include <cstring>

namespace ps {

Payload IdentityCodec::encode(const torch::Tensor& x) {
  auto flat = x.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  PayloadHeader header;
  header.codec = CodecId::Identity;
  header.shape = flat.sizes().vec();
  Payload p;
  const size_t body = size_t(flat.numel()) * sizeof(float);
  p.bytes.reserve(header.encodedSize() + body);
  header.writeTo(p.bytes);
  const size_t at = p.bytes.size();
  p.bytes.resize(at + body);
  std::memcpy(p.bytes.data() + at, flat.data_ptr<float>(), body);
  return p;
}

torch::Tensor IdentityCodec::decode(const Payload& payload, const torch::Device& device) {
  size_t offset = 0;
  PayloadHeader header = PayloadHeader::read(payload.bytes, offset);
  if (header.codec != CodecId::Identity) throw PayloadError("expected an identity payload");
  const size_t body = size_t(header.numel()) * sizeof(float);
  if (payload.bytes.size() - offset != body)
    throw PayloadError("body has " + std::to_string(payload.bytes.size() - offset) + " bytes, the shape needs " +
                       std::to_string(body));
  auto out = torch::empty(header.shape, torch::kFloat32);
  std::memcpy(out.data_ptr<float>(), payload.bytes.data() + offset, body);
  return device.is_cpu() ? out : out.to(device);
}

std::unique_ptr<Codec> makeCodec(const std::string& method) {
  if (method == "none") return std::make_unique<IdentityCodec>();
  throw std::invalid_argument("unknown compression method '" + method + "'");
}

}  // namespace ps
