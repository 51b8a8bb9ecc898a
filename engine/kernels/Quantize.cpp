#include "engine/kernels/Quantize.h"

#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Random.h"
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace ps::kernels {

namespace {

constexpr size_t kTile = 1024;  // codes buffered on the stack between quantizing and packing (multiple of 8)

// One group's affine map. Encode: v = (x - lo) * inv + add, code = clamp(floor(v)) (+ Bernoulli).
// Decode: x̂ = float(code * A - C) * mul + base.
struct GroupMap {
  float lo, inv, mul, base;
};

// What does not depend on the group.
struct Scheme {
  bool symmetric;
  int bits;
  float add;    // offset in level units (nearest rounding adds another 0.5)
  float top;    // largest code, 2^b - 1
  int32_t A, C;
  const float *scales, *mins, *maxs;

  // unit / d, with a zero (or NaN) d giving 0 and an overflow giving ±FLT_MAX.
  static float reciprocal(double unit, double d) {
    if (d == 0 || std::isnan(d)) return 0.f;
    const double r = unit / d;
    return float(std::clamp(r, -double(FLT_MAX), double(FLT_MAX)));
  }

  GroupMap group(size_t g) const {
    if (symmetric) {
      const float s = scales[g];
      if (bits == 1) return {0.f, reciprocal(1.0, s), s * 0.5f, 0.f};
      const double h = double(1 << (bits - 1));
      return {0.f, reciprocal(h, s), float(double(s) / h), 0.f};
    }
    // Decoded about the range's middle, x = (2 code - top) * range / (2 top) + mid: every intermediate stays within
    // float's range even when max - min itself does not (min and max near -FLT_MAX and FLT_MAX).
    const double range = double(maxs[g]) - double(mins[g]);
    return {mins[g], reciprocal(double(top), range), float(range / (2.0 * double(top))),
            float(double(mins[g]) + range / 2)};
  }
};

Scheme makeScheme(bool symmetric, int bits, const float* scales, const float* mins, const float* maxs) {
  const int32_t h = 1 << (bits - 1);
  Scheme s{symmetric, bits, 0.f, float((1 << bits) - 1), 1, 0, scales, mins, maxs};
  if (symmetric && bits == 1) s.add = 0.5f, s.A = 2, s.C = 1;   // levels -s/2, +s/2
  else if (symmetric) s.add = float(h), s.A = 1, s.C = h;       // code = q + h
  else s.A = 2, s.C = (1 << bits) - 1;                           // min-max: about the middle (GroupMap)
  return s;
}

PS_ALWAYS_INLINE void encodeNearest(const float* x, size_t b, size_t e, GroupMap m, float add, float top, uint8_t* codes) {
  for (size_t i = b; i < e; ++i) {
    float v = (x[i] - m.lo) * m.inv + add;
    v = v > 0.f ? v : 0.f;  // NaN -> 0
    v = v < top ? v : top;
    codes[i - b] = uint8_t(int32_t(v));  // v >= 0: truncation is floor
  }
}

PS_ALWAYS_INLINE void encodeStochastic(const float* x, size_t b, size_t e, GroupMap m, float add, float top, const uint32_t* u,
                      uint8_t* codes) {
  for (size_t i = b; i < e; ++i) {
    float v = (x[i] - m.lo) * m.inv + add;
    v = v > 0.f ? v : 0.f;
    v = v < top ? v : top;
    const int32_t f = int32_t(v);
    const int32_t threshold = int32_t((v - float(f)) * 16777216.f);  // fraction in units of 2^-24, exact
    codes[i - b] = uint8_t(f + int32_t(int32_t(u[i - b]) < threshold));  // v == top has fraction 0: never above
  }
}

PS_ALWAYS_INLINE void decode(const uint8_t* codes, size_t b, size_t e, GroupMap m, int32_t A, int32_t C, float* out) {
  for (size_t i = b; i < e; ++i) out[i] = float(int32_t(codes[i - b]) * A - C) * m.mul + m.base;
}

// Quantizes [r.begin, r.end) (r.begin a multiple of 8) tile by tile: codes of each group segment, then one pack.
// Cloned for AVX2 (Simd.h): the float-to-code and code-to-float loops run 8 wide there, with identical results.
PS_SIMD_CLONES void encodeRange(const float* x, size_t n, size_t group, const Scheme& sc, Rounding rnd, uint64_t hseed, Range r,
                 uint8_t* out) {
  uint8_t buf[kTile];
  uint32_t u[kTile];
  size_t g = r.begin / group, gEnd = groupEnd(n, group, g);
  GroupMap m = sc.group(g);
  const float add = sc.add + (rnd == Rounding::Nearest ? 0.5f : 0.f);
  for (size_t tile = r.begin; tile < r.end; tile += kTile) {
    const size_t te = std::min(tile + kTile, r.end);
    uint8_t* codes = sc.bits == 8 ? out + tile : buf;  // 8-bit codes are the output bytes
    if (rnd == Rounding::Stochastic) uniforms24(tile, te, hseed, u);
    for (size_t i = tile; i < te;) {
      if (i == gEnd) gEnd = groupEnd(n, group, ++g), m = sc.group(g);
      const size_t e = std::min(te, gEnd);
      if (rnd == Rounding::Nearest) encodeNearest(x, i, e, m, add, sc.top, codes + (i - tile));
      else encodeStochastic(x, i, e, m, add, sc.top, u + (i - tile), codes + (i - tile));
      i = e;
    }
    if (sc.bits != 8) packCodes(buf, te - tile, sc.bits, out + tile / 8 * size_t(sc.bits));
  }
}

PS_SIMD_CLONES void decodeRange(const uint8_t* in, size_t n, size_t group, const Scheme& sc, Range r, float* out) {
  uint8_t buf[kTile];
  size_t g = r.begin / group, gEnd = groupEnd(n, group, g);
  GroupMap m = sc.group(g);
  for (size_t tile = r.begin; tile < r.end; tile += kTile) {
    const size_t te = std::min(tile + kTile, r.end);
    const uint8_t* codes = buf;
    if (sc.bits == 8) codes = in + tile;
    else unpackCodes(in + tile / 8 * size_t(sc.bits), te - tile, sc.bits, buf);
    for (size_t i = tile; i < te;) {
      if (i == gEnd) gEnd = groupEnd(n, group, ++g), m = sc.group(g);
      const size_t e = std::min(te, gEnd);
      decode(codes + (i - tile), i, e, m, sc.A, sc.C, out);
      i = e;
    }
  }
}

void checkCommon(size_t n, int bits, size_t group, const char* who) {
  if (bits < 1 || bits > 8) throw KernelError(std::string(who) + ": bits must be in 1..8");
  if (group == 0) throw KernelError(std::string(who) + ": group must be >= 1");
  packedBytes(n, bits);  // overflow check
}

void quantize(const float* x, size_t n, size_t group, const Scheme& sc, Rounding rnd, uint64_t seed, uint8_t* out,
              int threads) {
  if (rnd != Rounding::Nearest && rnd != Rounding::Stochastic) throw KernelError("quantize: unknown rounding");
  if (n == 0) return;
  const uint64_t hseed = splitmix64(seed);
  const int nt = resolveThreads(threads, n);
  if (nt == 1) return encodeRange(x, n, group, sc, rnd, hseed, {0, n}, out);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 8);  // whole bytes per chunk
    if (r.size()) encodeRange(x, n, group, sc, rnd, hseed, r, out);
  }
}

void dequantize(const uint8_t* in, size_t inBytes, size_t n, size_t group, const Scheme& sc, float* out,
                int threads, const char* who) {
  if (n == 0) return;
  checkPackedCodes(in, inBytes, n, sc.bits, who);
  const int nt = resolveThreads(threads, n);
  if (nt == 1) return decodeRange(in, n, group, sc, {0, n}, out);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 8);
    if (r.size()) decodeRange(in, n, group, sc, r, out);
  }
}

}  // namespace

void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, Rounding r,
                           uint64_t seed, uint8_t* out, int threads) {
  checkCommon(n, bits, group, "quantizePackSymmetric");
  require(n == 0 || (x && scales && out), "quantizePackSymmetric: null pointer");
  quantize(x, n, group, makeScheme(true, bits, scales, nullptr, nullptr), r, seed, out, threads);
}

void unpackDequantizeSymmetric(const uint8_t* in, size_t inBytes, size_t n, int bits, size_t group,
                               const float* scales, float* out, int threads) {
  checkCommon(n, bits, group, "unpackDequantizeSymmetric");
  require(n == 0 || (in && scales && out), "unpackDequantizeSymmetric: null pointer");
  dequantize(in, inBytes, n, group, makeScheme(true, bits, scales, nullptr, nullptr), out, threads,
             "unpackDequantizeSymmetric");
}

void quantizePackMinMax(const float* x, size_t n, int bits, size_t group, const float* mins, const float* maxs,
                        Rounding r, uint64_t seed, uint8_t* out, int threads) {
  checkCommon(n, bits, group, "quantizePackMinMax");
  require(n == 0 || (x && mins && maxs && out), "quantizePackMinMax: null pointer");
  quantize(x, n, group, makeScheme(false, bits, nullptr, mins, maxs), r, seed, out, threads);
}

void unpackDequantizeMinMax(const uint8_t* in, size_t inBytes, size_t n, int bits, size_t group, const float* mins,
                            const float* maxs, float* out, int threads) {
  checkCommon(n, bits, group, "unpackDequantizeMinMax");
  require(n == 0 || (in && mins && maxs && out), "unpackDequantizeMinMax: null pointer");
  dequantize(in, inBytes, n, group, makeScheme(false, bits, nullptr, mins, maxs), out, threads,
             "unpackDequantizeMinMax");
}

}  // namespace ps::kernels
