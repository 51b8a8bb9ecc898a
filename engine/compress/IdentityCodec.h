#pragma once
#include "engine/compress/Codec.h"

namespace ps {

// Sends float32 values as they are: the uncompressed baseline every ratio is measured against.
class IdentityCodec final : public Codec {
 public:
  IdentityCodec() : Codec(CodecId::Identity) {}
  std::string describe() const override { return "none"; }
  bool lossless() const override { return true; }

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // The whole body can wait on the device: between GPUs of one process the tensor moves device to device.
  bool keepsTails() const override { return true; }
};

}  // namespace ps
