#pragma once
#include "engine/compress/Codec.h"

namespace ps {

// Sends float32 values as they are: the uncompressed baseline every ratio is measured against.
class IdentityCodec final : public Codec {
 public:
  Payload encode(const torch::Tensor& x) override;
  torch::Tensor decode(const Payload& payload, const torch::Device& device) override;
  std::string describe() const override { return "none"; }
  bool lossless() const override { return true; }
};

}  // namespace ps
