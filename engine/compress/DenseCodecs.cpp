#include "engine/compress/DenseCodecs.h"

#include "engine/compress/TensorKernels.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Half.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Qsgd.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

#include <cmath>
#include <cstring>

namespace ps {
namespace {

// Channel-major view: the channel dimension first, so each channel's values are contiguous.
int64_t channelDim(const std::vector<int64_t>& shape) { return shape.size() == 4 ? 1 : int64_t(shape.size()) - 1; }

}  // namespace

// ---- fp16 / bf16 ----
void HalfCodec::encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) {
  if (keepsTail(x)) {
    p.tail = halvesHere(x.reshape({-1}), bf16_).view(torch::kUInt8);
    return;
  }
  const size_t n = size_t(x.numel());
  auto* out = reinterpret_cast<uint16_t*>(w.grow(2 * n));
  bf16_ ? kernels::floatToBf16(x.data_ptr<float>(), n, out) : kernels::floatToHalf(x.data_ptr<float>(), n, out);
  kernels::saturateInfinities(out, n, bf16_);
}

torch::Tensor HalfCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) {
  const size_t n = size_t(h.numel());
  if (tail().defined()) {
    if (size_t(tail().numel()) != 2 * n)
      throw PayloadError("the tail has " + std::to_string(tail().numel()) + " bytes, the shape needs " +
                         std::to_string(2 * n));
    auto out = tail().to(device).view(bf16_ ? torch::kBFloat16 : torch::kHalf).to(torch::kFloat32);
    if (n && !out.isfinite().all().item<bool>()) throw PayloadError("a value is not finite");
    return out.view(h.shape);
  }
  auto in = reinterpret_cast<const uint16_t*>(r.take(2 * n, "half values"));
  auto out = outputTensor(h.shape);
  bf16_ ? kernels::bf16ToFloat(in, n, out.data_ptr<float>()) : kernels::halfToFloat(in, n, out.data_ptr<float>());
  if (!kernels::allFinite(out.data_ptr<float>(), n)) throw PayloadError("a value is not finite");
  return out;
}

// ---- Q_b ----
QuantizeCodec::QuantizeCodec(const CompressionOptions& o, const CodecContext& c)
    : Codec(CodecId::Quantize), scale_(o.scale), stream_(c.stream()) {
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

// ---- QSGD ----
QsgdCodec::QsgdCodec(const CompressionOptions& o, const CodecContext& c)
    : Codec(CodecId::Qsgd), levels_(o.levels), bucket_(o.bucket), stream_(c.stream()) {}

double QsgdCodec::omega(c10::IntArrayRef shape) const {
  // The supremum of E|Q(x) - x|^2 / |x|^2 over a bucket of d values. With u = s|x_i| / |x| (so sum u² = s²) the
  // variance is |x|²/s² sum h(u_i), h(u) = frac(u)(1 - frac(u)); h's concave envelope in u² is sqrt(v) - v up to
  // v = 1/4 and 1/4 beyond, so by Jensen the sum is at most d times it at u² = s²/d. For s <= sqrt(d)/2 every
  // u_i = s / sqrt(d) attains it (sqrt(d)/s - 1, tighter than Alistarh et al.'s min(d/s², sqrt(d)/s)); above, d/(4s²).
  const double d = double(std::min<int64_t>(c10::multiply_integers(shape), bucket_)), s = double(levels_);
  return s * s <= d / 4 ? std::sqrt(d) / s - 1 : d / (4 * s * s);
}

void QsgdCodec::encodeBody(const torch::Tensor& x, Payload&, ByteWriter& w) {
  const uint64_t n = uint64_t(x.numel()), bucket = uint64_t(std::max<int64_t>(1, bucket_));
  const int bits = kernels::qsgdBits(levels_);
  w.put<uint8_t>(uint8_t(levels_));
  w.put<uint32_t>(uint32_t(bucket));
  const uint64_t buckets = (n + bucket - 1) / bucket;
  const uint64_t seed = kernels::splitmix64(stream_ + messages_++);
  norms_.resize(buckets);
  uint8_t* block = w.grow(buckets * 4 + kernels::packedBytes(n, bits));  // norms, then the packed codes
  kernels::qsgdEncode(x.data_ptr<float>(), n, bucket, levels_, seed, norms_.data(), block + buckets * 4);
  if (buckets) std::memcpy(block, norms_.data(), buckets * 4);  // the payload's bytes carry no float alignment
}

torch::Tensor QsgdCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device&) {
  const int s = r.get<uint8_t>("levels");
  const uint64_t bucket = r.get<uint32_t>("bucket");
  const uint64_t n = uint64_t(h.numel());
  if (s < 1 || s > 127 || bucket == 0) throw PayloadError("QSGD levels or bucket out of range");
  const int bits = kernels::qsgdBits(s);
  const uint64_t buckets = (n + bucket - 1) / bucket;
  if (buckets > r.remaining() / 4) throw PayloadError("more QSGD buckets than bytes");
  norms_.resize(buckets);
  std::memcpy(norms_.data(), r.take(buckets * 4, "norms"), buckets * 4);
  for (float norm : norms_)
    if (!std::isfinite(norm) || norm < 0) throw PayloadError("a QSGD norm is not a finite non-negative number");
  const size_t packed = kernels::packedBytes(n, bits);
  const uint8_t* codes = r.take(packed, "codes");
  auto out = outputTensor(h.shape);
  kernels::qsgdDecode(codes, packed, n, bucket, s, norms_.data(), out.data_ptr<float>());
  return out;
}

}  // namespace ps
