#pragma once
// Codecs that send one value (or code) per element: fp16 / bf16 casts, Q_b quantization, and QSGD.
#include "engine/compress/Codec.h"
#include "engine/compress/ValueCoding.h"

#include <vector>

namespace ps {

class HalfCodec final : public Codec {
 public:
  explicit HalfCodec(bool bf16) : Codec(bf16 ? CodecId::Bf16 : CodecId::Half), bf16_(bf16) {}
  std::string describe() const override { return bf16_ ? "bf16" : "fp16"; }

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // The halves can wait on the device: converted there (torch rounds to nearest even, as the CPU kernels do).
  bool keepsTails() const override { return true; }
  bool bf16_;
};

// Q_b with scales per tensor, per channel (dimension 1 of a 4-d activation, the last one otherwise) or per bucket.
class QuantizeCodec final : public Codec {
 public:
  QuantizeCodec(const CompressionOptions& o, const CodecContext& c);
  std::string describe() const override;
  double omega(c10::IntArrayRef shape) const override;

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // Symmetric max-abs with nearest rounding is encoded on a GPU (TensorKernels); min-max and stochastic on the host.
  bool encodesOnDevice() const override { return encodesWhereItLives(format_); }
  // ... and then its codes can wait there too.
  bool keepsTails() const override { return encodesWhereItLives(format_); }
  // Values per scale group for a tensor of this shape, and how they are laid out (0 tensor, 1 bucket, 2 channel).
  uint64_t groupOf(c10::IntArrayRef shape, uint8_t& mode) const;

  ValueFormat format_;
  std::string scale_;
  uint64_t stream_, messages_ = 0;
};

// QSGD with s levels per bucket: x_hat = |x|_2 sign(x) xi / s, xi the stochastic rounding of s|x|/|x|_2.
class QsgdCodec final : public Codec {
 public:
  QsgdCodec(const CompressionOptions& o, const CodecContext& c);
  std::string describe() const override { return "qsgd s=" + std::to_string(levels_); }
  double omega(c10::IntArrayRef shape) const override;

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  int levels_;
  int64_t bucket_;
  uint64_t stream_, messages_ = 0;
  std::vector<float> norms_;  // reused between messages
};

}  // namespace ps
