#pragma once
// Sparsifiers: TopK (exact), GaussianK (approximate threshold), sampled threshold (DGC) and RandK (seeded,
// no indices on the wire). Indices travel in the cheapest of 32-bit, delta+varint or bitmap; values in
// float32, fp16 or quantized again (value_bits).
#include "engine/compress/Codec.h"
#include "engine/compress/TensorKernels.h"
#include "engine/compress/ValueCoding.h"

namespace ps {

class SparseCodec final : public Codec {
 public:
  enum class Kind : uint8_t { TopK = 0, GaussianK = 1, SampledK = 2, RandK = 3 };
  SparseCodec(const CompressionOptions& o, const CodecContext& c);
  std::string describe() const override;
  double omega(c10::IntArrayRef shape) const override;
  // k = max(1, round(K n)), as docs/algorithms.md defines it.
  static uint64_t keep(double K, uint64_t n);

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // TopK checks only what it selected: any inf or NaN in the input would be among it.
  bool findsNonFinite() const override { return kind_ == Kind::TopK; }
  // Every selector runs on a GPU (TensorKernels); only the selection comes to the host.
  bool encodesOnDevice() const override { return true; }
  // The selectors with indices on the wire keep their index and value blocks on the device (Payload::tail), for
  // values in float32, fp16 or the device's quantizer; RandK draws its positions on the host and sends them there.
  bool keepsTails() const override;
  void encodeTail(const TensorKernels& x, uint64_t k, uint64_t seed, const torch::Tensor& input, Payload& p,
                  ByteWriter& w);
  torch::Tensor decodeTail(uint64_t count, uint64_t n, ByteReader& r, const torch::Device& device);
  void selectRandom(uint64_t n, uint64_t k, uint64_t seed);  // fills indices_ ascending
  // GaussianK or the sampled threshold: fill indices_ and picked_, return how many were kept.
  uint64_t selectAboveThreshold(const TensorKernels& x, uint64_t k, uint64_t seed);
  float sampleThresholdOf(const TensorKernels& x, uint64_t seed);
  // The selection's kind, count and index block (its byte length first).
  void writeIndices(uint64_t count, uint64_t n, Payload& p, ByteWriter& w);

  Kind kind_;
  double K_, sample_;
  bool trim_, scaled_;
  ValueFormat values_;
  uint64_t stream_, messages_ = 0;
  std::vector<uint32_t> indices_, trimmed_;
  std::vector<float> picked_, scratch_;
  std::vector<uint8_t> bitmap_;
};

}  // namespace ps
