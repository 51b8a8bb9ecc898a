#include "engine/compress/BottleneckCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/ValueCoding.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

namespace ps {
namespace {

// Body: the code's values as one value block. The projections themselves are layers of the stages, not of the codec:
// by the time a tensor reaches it, it is the code.
class BottleneckCodec final : public Codec {
 public:
  BottleneckCodec(const CompressionOptions& o, const CodecContext& context)
      : Codec(payloadOf<BottleneckEntry>()), width_(o.value("code_width").get<int64_t>()), stream_(context.stream()) {
    values_.bits = o.value_bits;
    values_.stochastic = o.rounding == "stochastic";
    values_.minmax = o.range == "minmax";
    values_.group = uint64_t(o.bucket);
  }
  std::string describe() const override {
    std::string s = "bottleneck " + std::to_string(width_);
    if (values_.bits != 32) s += " " + std::to_string(values_.bits) + "-bit";
    return s;
  }
  bool lossless() const override { return values_.bits == 32; }
  double omega(c10::IntArrayRef shape) const override {
    uint64_t n = 1;
    for (int64_t d : shape) n *= uint64_t(d);
    return quantizerOmega(values_, std::min<uint64_t>(values_.group, n));
  }

 private:
  void encodeBody(const torch::Tensor& x, Payload&, ByteWriter& w) override {
    encodeValues(x.data_ptr<float>(), size_t(x.numel()), values_, kernels::splitmix64(stream_ + messages_++), w);
  }
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device&) override {
    const size_t n = size_t(h.numel());
    requireValueBlock(r, n);
    auto out = outputTensor(h.shape);
    decodeValues(r, n, out.data_ptr<float>());
    return out;
  }

  int64_t width_;
  ValueFormat values_;
  uint64_t stream_, messages_ = 0;
};

}  // namespace

std::unique_ptr<Codec> BottleneckEntry::make(const CompressionOptions& options, const CodecContext& context) {
  return std::make_unique<BottleneckCodec>(options, context);
}

}  // namespace ps
