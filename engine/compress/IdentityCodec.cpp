#include "engine/compress/IdentityCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/TensorKernels.h"
#include "engine/kernels/GroupStats.h"

#include <torch/torch.h>

#include <cstring>

namespace ps {
namespace {

// Sends float32 values as they are: the uncompressed baseline every ratio is measured against.
class IdentityCodec final : public Codec {
 public:
  IdentityCodec() : Codec(payloadOf<IdentityEntry>()) {}
  std::string describe() const override { return "none"; }
  bool lossless() const override { return true; }

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // The whole body can wait on the device: between GPUs of one process the tensor moves device to device.
  bool keepsTails() const override { return true; }
};

void IdentityCodec::encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) {
  if (keepsTail(x)) {  // a copy: the sender may change x before the receiver reads it
    p.tail = x.reshape({-1}).clone().view(torch::kUInt8);
    return;
  }
  const size_t body = size_t(x.numel()) * sizeof(float);
  std::memcpy(w.grow(body), x.data_ptr<float>(), body);
}

torch::Tensor IdentityCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) {
  const size_t body = size_t(h.numel()) * sizeof(float);
  if (tail().defined()) {
    if (r.remaining() != 0 || size_t(tail().numel()) != body)
      throw PayloadError("the tail has " + std::to_string(tail().numel()) + " bytes, the shape needs " +
                         std::to_string(body));
    // A float tensor of its own, filled by one copy (device to device when the tail is on a peer GPU).
    auto out = torch::empty({h.numel()}, torch::TensorOptions(torch::kFloat32).device(device));
    if (body) out.view(torch::kUInt8).copy_(tail());
    requireAllFinite(out, nonFiniteValue());
    return out.view(h.shape);
  }
  if (r.remaining() != body)
    throw PayloadError("body has " + std::to_string(r.remaining()) + " bytes, the shape needs " + std::to_string(body));
  auto out = outputTensor(h.shape);
  std::memcpy(out.data_ptr<float>(), r.take(body, "values"), body);
  requireAllFinite(out, nonFiniteValue());
  return out;
}

}  // namespace

std::unique_ptr<Codec> IdentityEntry::make(const CompressionOptions&, const CodecContext&) {
  return std::make_unique<IdentityCodec>();
}

}  // namespace ps
