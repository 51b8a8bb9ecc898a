#include "engine/compress/QuantizeCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/HalfCodec.h"
#include "engine/compress/TensorKernels.h"
#include "engine/compress/ValueCoding.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

namespace ps {
namespace {

// Channel-major view: the channel dimension first, so each channel's values are contiguous.
int64_t channelDim(const std::vector<int64_t>& shape) { return shape.size() == 4 ? 1 : int64_t(shape.size()) - 1; }

// Body: u8 scale mode (0 tensor, 1 bucket, 2 channel), then the value block (engine/compress/ValueCoding.h).
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

QuantizeCodec::QuantizeCodec(const CompressionOptions& o, const CodecContext& c)
    : Codec(payloadOf<QuantizeEntry>()), scale_(o.scale), stream_(c.stream()) {
  format_.bits = o.bits;
  format_.minmax = o.range == "minmax";
  format_.stochastic = o.rounding == "stochastic";
  format_.group = uint64_t(o.bucket);
}

std::string QuantizeCodec::describe() const {
  return "quantize " + std::to_string(format_.bits) + "-bit " + (format_.minmax ? "minmax " : "") + scale_ +
         (format_.stochastic ? " stochastic" : "");
}

uint64_t QuantizeCodec::groupOf(c10::IntArrayRef shape, uint8_t& mode) const {
  const int64_t n = c10::multiply_integers(shape);
  if (scale_ == "tensor" || shape.empty()) {
    mode = 0;
    return uint64_t(std::max<int64_t>(1, n));
  }
  if (scale_ == "channel" && shape.size() >= 2) {
    mode = 2;
    const int64_t channels = shape[size_t(channelDim(shape.vec()))];
    return uint64_t(std::max<int64_t>(1, channels ? n / channels : 1));
  }
  mode = 1;
  return format_.group;  // encodeValues caps it at n
}

double QuantizeCodec::omega(c10::IntArrayRef shape) const {
  uint8_t mode = 0;
  const uint64_t n = uint64_t(std::max<int64_t>(1, c10::multiply_integers(shape)));
  return quantizerOmega(format_, std::min(groupOf(shape, mode), n));
}

void QuantizeCodec::encodeBody(const torch::Tensor& input, Payload& p, ByteWriter& w) {
  torch::Tensor x = input;
  ValueFormat f = format_;
  uint8_t mode = 0;
  f.group = groupOf(x.sizes(), mode);
  if (mode == 2) x = x.movedim(channelDim(x.sizes().vec()), 0).contiguous();
  w.put<uint8_t>(mode);
  encodeValues(TensorKernels(x), f, kernels::splitmix64(stream_ + messages_++), w,
               keepsTail(input) ? &p.tail : nullptr);
}

torch::Tensor QuantizeCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) {
  const uint8_t mode = r.get<uint8_t>("scale mode");
  if (mode > 2 || (mode == 2 && h.shape.size() < 2)) throw PayloadError("bad scale mode " + std::to_string(mode));
  std::vector<int64_t> stored = h.shape;
  if (mode == 2) {
    const int64_t c = channelDim(h.shape);
    stored.erase(stored.begin() + c);
    stored.insert(stored.begin(), h.shape[size_t(c)]);
  }
  const torch::Tensor* codes = tail().defined() ? &tail() : nullptr;
  if (!codes) requireValueBlock(r, size_t(h.numel()));  // before the output a hostile shape could make huge
  const ValueBlock block = readValues(r, size_t(h.numel()), codes);
  torch::Tensor out;
  if (codes && !codes->is_cpu()) {  // codes from a GPU of this process: copied device to device, decoded there
    if (block.minmax) throw PayloadError("codes in a tail are symmetric codes");  // readValues checked the width
    out = dequantizeOnDevice(stored, device, *codes, block.bits, block.group, block.lo.data());
  } else if (decodesOnDevice(device) && block.bits <= 8 && !block.minmax) {  // the codes cross PCIe, not the floats
    out = dequantizeOnDevice(stored, device, block.data, block.bits, block.group, block.lo.data());
  } else {
    out = outputTensor(stored);  // per-channel scales: a scratch buffer, moved to its dimension below
    decodeValues(block, size_t(out.numel()), out.data_ptr<float>());
  }
  if (mode == 2) out = out.movedim(0, channelDim(h.shape)).contiguous();
  return out;
}

}  // namespace

std::unique_ptr<Codec> QuantizeEntry::make(const CompressionOptions& o, const CodecContext& c) {
  if (o.bits == 16) return Fp16Entry::make(o, c);  // the bits slider's last position
  return std::make_unique<QuantizeCodec>(o, c);
}

}  // namespace ps
