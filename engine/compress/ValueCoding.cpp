#include "engine/compress/ValueCoding.h"

#include "engine/compress/TensorKernels.h"

#include "engine/kernels/Half.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/BitPack.h"
#include "engine/kernels/Quantize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

namespace ps {
namespace {

namespace k = kernels;

enum ScaleType : uint8_t { kScaleHalf = 0, kScaleFloat = 1 };

// Scales travel in fp16 when every one fits; rounding moves them outwards (max up, min down) so the
// quantizer and the receiver use the same numbers and no value falls outside its group's range.
bool fitsHalf(const std::vector<float>& v) {
  for (float s : v)
    if (!(std::fabs(s) <= 65504.f) || (s != 0.f && std::fabs(s) < 6.1e-5f)) return false;
  return true;
}

float roundOut(float v, bool up) {
  float h = k::halfToFloat(k::floatToHalf(v));
  if (up ? h < v : h > v) h = k::halfToFloat(uint16_t(k::floatToHalf(h) + ((h >= 0) == up ? 1 : -1)));
  return h;
}

void putScales(std::vector<float>& v, bool half, bool up, ByteWriter& out) {
  if (half) {
    for (float& s : v) {
      s = roundOut(s, up);
      out.put<uint16_t>(k::floatToHalf(s));
    }
  } else {
    for (float s : v) out.put<float>(s);
  }
}

std::vector<float> getScales(ByteReader& in, size_t groups, uint8_t type) {
  std::vector<float> v(groups);
  for (auto& s : v) {
    s = type == kScaleHalf ? k::halfToFloat(in.get<uint16_t>("scales")) : in.get<float>("scales");
    if (!std::isfinite(s)) throw PayloadError("a scale is not finite");
  }
  return v;
}

// What the max-abs scale sent is, in units of the group's largest magnitude s. The codes run from -h to h-1
// (h = 2^(b-1)): with the scale at s the maximum itself would be clamped a full step away, so b >= 2 stretches it by
// h/(h-1), which gives +s a code, keeps every element within half a step and stochastic rounding unbiased. One bit
// decodes to +-scale/2: nearest rounding keeps the scale at s (levels +-s/2, the cells' centres, the smaller error);
// stochastic rounding doubles it, so the levels are +-s and no element is clamped (unbiased).
double scaleStretch(const ValueFormat& f) {
  if (f.bits >= 2) {
    const double h = double(1 << (f.bits - 1));
    return h / (h - 1);
  }
  return f.stochastic ? 2.0 : 1.0;
}

}  // namespace

double quantizerOmega(const ValueFormat& f, uint64_t group) {
  if (f.bits == 32) return 0;
  if (f.bits == 16 || !f.stochastic || f.bits < 1 || f.bits > 8) return -1;
  // The supremum over inputs of E|Q(x) - x|^2 / |x|^2 for one scale group of d values. Stochastic rounding between
  // neighbouring levels Δ apart has variance f(1 - f)Δ² for an element at fraction f of its step. Scales travel in
  // fp16 rounded outwards, which widens Δ by up to eps (relative) and lifts the extremes off their levels by as much.
  const double d = double(std::max<uint64_t>(1, group)), eps = 0x1p-10;
  if (f.minmax) {
    // 2^b - 1 steps over [min, max]; the worst case puts min = -max (the norm is smallest for the range) and every
    // other element at zero, a step's midpoint: (d - 2) Δ²/4 over 2 (L Δ / 2)². The widened extremes add at most
    // 2 eps L Δ² each against a norm of at least L² Δ² / 2.
    if (d < 2) return 0.0;
    const double L = double((1 << f.bits) - 1);
    return std::max(d - 2, 0.0) * (1 + eps) * (1 + eps) / (2 * L * L) + 4 * eps * (1 + eps) / L;
  }
  if (f.bits == 1) {
    // Two levels ±s with s = max|x| (widened): an element at zero has variance s², the maximum one s² - max².
    return d * (1 + eps) * (1 + eps) - 1;
  }
  // Max-abs, b >= 2: the maximum M sits on level h - 1 (the stretched scale), L = h - 1 steps from zero; widening
  // moves it below that level by at most v = (h - 1) eps / (1 + eps) steps (its own variance is at most v Δ²) and
  // makes it L / (1 + eps) steps long. The other m = d - 1 elements are worst at one small fraction f of the first
  // step: ω = max_f (m f(1 - f) + v) / (L² + m f²), whose maximiser solves m f² + 2(L² + v) f - L² = 0.
  const double h = double(1 << (f.bits - 1)), L = (h - 1) / (1 + eps), v = (h - 1) * eps / (1 + eps);
  const double m = d - 1, a = L * L + v;
  const double best = m > 0 ? (std::sqrt(a * a + m * L * L) - a) / m : 0.0;
  return (m * best * (1 - best) + v) / (L * L + m * best * best);
}

namespace {

// A quantized block's fields after its bit width: range and values per scale group (the format's, capped at n, at
// least 1); returns the group size.
size_t putRangeAndGroup(const ValueFormat& f, size_t n, ByteWriter& out) {
  const size_t group = std::max<uint64_t>(1, std::min<uint64_t>(f.group, std::max<size_t>(n, 1)));
  out.put<uint8_t>(f.minmax ? 1 : 0);
  out.put<uint32_t>(uint32_t(group));
  return group;
}

// The symmetric max-abs block after its bit width: range, group, scales, codes. `maxAbs(group, scales)` and
// `pack(group, scales)` (which writes the codes) run where the values are.
template <typename MaxAbs, typename Pack>
void encodeSymmetric(size_t n, const ValueFormat& f, ByteWriter& out, MaxAbs&& maxAbs, Pack&& pack) {
  const size_t group = putRangeAndGroup(f, n, out);
  std::vector<float> scale(k::groupCount(n, group));
  maxAbs(group, scale.data());
  const double stretch = scaleStretch(f);
  if (stretch != 1.0)  // saturating: a stretched scale beyond float's range stays finite (the edge clamps)
    for (float& s : scale) s = float(std::min(double(s) * stretch, double(FLT_MAX)));
  const bool half = fitsHalf(scale);
  out.put<uint8_t>(half ? kScaleHalf : kScaleFloat);
  putScales(scale, half, true, out);
  pack(group, scale.data());
}

}  // namespace

torch::Tensor halvesHere(const torch::Tensor& x, bool bf16) {
  // The largest finite half is 65504, bf16's 0x7f7f (about 3.39e38). Clamped before the cast: a float beyond it
  // rounds to it or to inf, which saturateInfinities turns into it.
  const double top = bf16 ? 3.3895313892515355e38 : 65504.0;
  return x.clamp(-top, top).to(bf16 ? torch::kBFloat16 : torch::kHalf);
}

bool encodesWhereItLives(const ValueFormat& f) {
  return f.bits >= 1 && f.bits <= 8 && !f.minmax && !f.stochastic;
}

void encodeValues(const float* x, size_t n, const ValueFormat& f, uint64_t seed, ByteWriter& out) {
  out.put<uint8_t>(uint8_t(f.bits));
  if (f.bits == 32) {
    if (n) std::memcpy(out.grow(n * 4), x, n * 4);  // an empty selection has no data pointer to copy from
    return;
  }
  if (f.bits == 16) {  // converted aligned: the block may start at an odd byte of the payload
    std::vector<uint16_t> h(n);
    k::floatToHalf(x, n, h.data());
    k::saturateInfinities(h.data(), n, false);
    if (n) std::memcpy(out.grow(n * 2), h.data(), n * 2);
    return;
  }
  const auto rounding = f.stochastic ? k::Rounding::Stochastic : k::Rounding::Nearest;
  if (!f.minmax) {
    encodeSymmetric(
        n, f, out, [&](size_t group, float* scales) { k::groupMaxAbs(x, n, group, scales); },
        [&](size_t group, const float* scales) {
          k::quantizePackSymmetric(x, n, f.bits, group, scales, rounding, seed, out.grow(k::packedBytes(n, f.bits)));
        });
    return;
  }
  const size_t group = putRangeAndGroup(f, n, out);
  std::vector<float> lo(k::groupCount(n, group)), hi(lo.size());
  k::groupMinMax(x, n, group, lo.data(), hi.data());
  const bool half = fitsHalf(lo) && fitsHalf(hi);
  out.put<uint8_t>(half ? kScaleHalf : kScaleFloat);
  putScales(lo, half, false, out);
  putScales(hi, half, true, out);
  k::quantizePackMinMax(x, n, f.bits, group, lo.data(), hi.data(), rounding, seed, out.grow(k::packedBytes(n, f.bits)));
}

void encodeValues(const TensorKernels& x, const ValueFormat& f, uint64_t seed, ByteWriter& out, torch::Tensor* codes) {
  if (x.onHost() && !codes) return encodeValues(x.host(), x.size(), f, seed, out);
  if (!encodesWhereItLives(f)) throw std::logic_error("encodeValues: this value format is encoded on the host only");
  out.put<uint8_t>(uint8_t(f.bits));
  encodeSymmetric(
      x.size(), f, out, [&](size_t group, float* scales) { x.groupMaxAbs(group, scales); },
      [&](size_t group, const float* scales) {
        if (codes)
          *codes = x.quantizeNearest(f.bits, group, scales);
        else
          x.quantizeNearest(f.bits, group, scales, out.grow(k::packedBytes(x.size(), f.bits)));
      });
}

void requireValueBlock(const ByteReader& in, size_t n) {
  const int bits = in.peek("value bits");
  const int width = bits == 32 || bits == 16 ? bits : std::clamp(bits, 1, 8);
  const uint64_t needed = 1 + (uint64_t(n) * uint64_t(width) + 7) / 8;
  if (needed > in.remaining())
    throw PayloadError(std::to_string(n) + " values of " + std::to_string(width) + " bits need " +
                       std::to_string(needed) + " bytes, the payload has " + std::to_string(in.remaining()));
}

ValueBlock readValues(ByteReader& in, size_t n, const torch::Tensor* codes) {
  ValueBlock b;
  b.bits = in.get<uint8_t>("value bits");
  if (codes && (b.bits < 1 || b.bits > 8))
    throw PayloadError("a tail with a block of " + std::to_string(b.bits) + "-bit values");
  if (b.bits == 32 || b.bits == 16) {
    b.bytes = n * size_t(b.bits / 8);
    b.data = in.take(b.bytes, b.bits == 32 ? "float32 values" : "fp16 values");
    return b;
  }
  if (b.bits < 1 || b.bits > 8)
    throw PayloadError("value width " + std::to_string(b.bits) + " bits; allowed 1..8, 16, 32");
  const uint8_t minmax = in.get<uint8_t>("range");
  const uint32_t group = in.get<uint32_t>("group size");
  const uint8_t type = in.get<uint8_t>("scale type");
  if (minmax > 1 || type > 1) throw PayloadError("unknown range or scale type");
  if (group == 0 || group > std::max<size_t>(n, 1)) throw PayloadError("group size " + std::to_string(group));
  b.minmax = minmax == 1;
  b.group = group;
  const size_t groups = k::groupCount(n, group);
  if (groups > in.remaining()) throw PayloadError("more scale groups than bytes");
  b.lo = getScales(in, groups, type);
  if (b.minmax) b.hi = getScales(in, groups, type);
  b.bytes = k::packedBytes(n, b.bits);
  if (codes) {  // the codes stayed on the encoder's device, in the payload's tail
    if (uint64_t(codes->numel()) != b.bytes || codes->scalar_type() != torch::kUInt8)
      throw PayloadError("the tail holds " + std::to_string(codes->numel()) + " bytes where the codes take " +
                         std::to_string(b.bytes));
    if (!codes->is_cpu()) {  // read there by the decoder (data stays null); the last byte's unused bits checked here
      const size_t used = (n * size_t(b.bits)) % 8;
      if (used && b.bytes && (codes->narrow(0, int64_t(b.bytes) - 1, 1).item<uint8_t>() >> used) != 0)
        throw PayloadError("codes: the unused bits of the last byte are not 0");
      return b;
    }
    b.data = codes->data_ptr<uint8_t>();
  } else {
    b.data = in.take(b.bytes, "codes");
  }
  try {
    k::checkPackedCodes(b.data, b.bytes, n, b.bits, "codes");
  } catch (const k::KernelError& e) {
    throw PayloadError(e.what());
  }
  return b;
}

void decodeValues(const ValueBlock& b, size_t n, float* out) {
  if (b.bits == 32) {
    if (n > 0) std::memcpy(out, b.data, n * 4);  // an empty block may come with no buffer at all
    if (!k::allFinite(out, n)) throw PayloadError("a value is not finite");
    return;
  }
  if (b.bits == 16) {
    // The block follows variable-length fields, so it may start at an odd byte; the kernel reads uint16_t.
    std::vector<uint16_t> aligned;
    if (n > 0 && reinterpret_cast<uintptr_t>(b.data) % alignof(uint16_t) != 0) {
      aligned.resize(n);
      std::memcpy(aligned.data(), b.data, n * 2);
    }
    k::halfToFloat(aligned.empty() ? reinterpret_cast<const uint16_t*>(b.data) : aligned.data(), n, out);
    if (!k::allFinite(out, n)) throw PayloadError("a value is not finite");
    return;
  }
  try {
    if (b.minmax)
      k::unpackDequantizeMinMax(b.data, b.bytes, n, b.bits, b.group, b.lo.data(), b.hi.data(), out);
    else
      k::unpackDequantizeSymmetric(b.data, b.bytes, n, b.bits, b.group, b.lo.data(), out);
  } catch (const k::KernelError& e) {
    throw PayloadError(e.what());
  }
}

void decodeValues(ByteReader& in, size_t n, float* out) {
  decodeValues(readValues(in, n), n, out);
}

}  // namespace ps
