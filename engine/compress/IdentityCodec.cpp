#include "engine/compress/IdentityCodec.h"

#include <torch/torch.h>

#include <cstring>

namespace ps {

Payload IdentityCodec::encode(const torch::Tensor& x) {
  auto flat = cpuFloat(x);
  PayloadHeader header;
  header.codec = CodecId::Identity;
  header.shape = flat.sizes().vec();
  Payload p;
  p.values = uint64_t(flat.numel());
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
  PayloadHeader header = readHeader(payload, CodecId::Identity, offset);
  const size_t body = size_t(header.numel()) * sizeof(float);
  if (payload.bytes.size() - offset != body)
    throw PayloadError("body has " + std::to_string(payload.bytes.size() - offset) + " bytes, the shape needs " +
                       std::to_string(body));
  auto out = torch::empty(header.shape, torch::kFloat32);
  std::memcpy(out.data_ptr<float>(), payload.bytes.data() + offset, body);
  return onDevice(out, device);
}

}  // namespace ps
