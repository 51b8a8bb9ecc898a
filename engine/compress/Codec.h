#pragma once
// A codec turns a tensor into a payload of real bytes and back. Small and strategy-shaped:
// error compensation and links wrap codecs; they never look inside one.
#include "engine/compress/Payload.h"

#include <torch/types.h>

#include <memory>
#include <string>

namespace ps {

class Codec {
 public:
  virtual ~Codec() = default;
  virtual Payload encode(const torch::Tensor& x) = 0;
  // Validates the payload (untrusted input) and decodes it onto `device`.
  virtual torch::Tensor decode(const Payload& payload, const torch::Device& device) = 0;
  virtual std::string describe() const = 0;
  // True when decode(encode(x)) == x exactly, so error measurement can be skipped.
  virtual bool lossless() const { return false; }
};

// Builds the codec named in a config (`none` in this version).
std::unique_ptr<Codec> makeCodec(const std::string& method);

}  // namespace ps
