#include "engine/compress/IdentityCodec.h"

#include "engine/kernels/GroupStats.h"

#include <torch/torch.h>

#include <cstring>

namespace ps {

void IdentityCodec::encodeBody(const torch::Tensor& x, Payload&, ByteWriter& w) {
  const size_t body = size_t(x.numel()) * sizeof(float);
  std::memcpy(w.grow(body), x.data_ptr<float>(), body);
}

torch::Tensor IdentityCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device&) {
  const size_t body = size_t(h.numel()) * sizeof(float);
  if (r.remaining() != body)
    throw PayloadError("body has " + std::to_string(r.remaining()) + " bytes, the shape needs " + std::to_string(body));
  auto out = outputTensor(h.shape);
  std::memcpy(out.data_ptr<float>(), r.take(body, "values"), body);
  if (!kernels::allFinite(out.data_ptr<float>(), size_t(h.numel()))) throw PayloadError("a value is not finite");
  return out;
}

}  // namespace ps
