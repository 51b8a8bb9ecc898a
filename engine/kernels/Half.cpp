#include "engine/kernels/Half.h"

#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"

#include <cstring>

namespace ps::kernels {

namespace {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// All-ones when c, else 0. Selecting with masks (not ?:) keeps GCC from turning the float operations below into
// branches it then may not vectorise (they could trap, as far as it knows).
inline uint32_t maskIf(bool c) { return 0u - uint32_t(c); }

// After F. Giesen's float_to_half_fast3_rtne, with every path computed and the result picked by masks.
inline uint16_t toHalf(uint32_t f) {
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t a = f & 0x7fffffffu;
  // Normal halves: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even; a carry out of
  // the mantissa bumps the exponent, up to inf, which is exactly right.
  const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  // Subnormal halves (|v| < 2^-14): adding 0.5f lines the 10 result bits up at the bottom of the mantissa and the
  // FPU's own round-to-nearest-even does the rounding. (For larger |v| the value is unused.)
  const uint32_t sub = bitsOf(floatOf(a & 0x3fffffffu) + 0.5f) - 0x3f000000u;
  const uint32_t nan = 0x7e00u | ((a >> 13) & 0x1ffu);
  const uint32_t isBig = maskIf(a >= 0x47800000u), isSub = maskIf(a < 0x38800000u);  // |v| >= 65536, < 2^-14
  const uint32_t isNan = maskIf(a > 0x7f800000u);
  const uint32_t big = (nan & isNan) | (0x7c00u & ~isNan);  // inf, or NaN stays NaN
  const uint32_t small = (sub & isSub) | (normal & ~isSub);
  return uint16_t((big & isBig) | (small & ~isBig) | sign);
}

inline float fromHalf(uint16_t h) {
  const uint32_t o = uint32_t(h & 0x7fffu) << 13;
  const uint32_t exp = o & 0x0f800000u;
  const uint32_t normal = o + 0x38000000u;                                       // rebias 15 -> 127
  const uint32_t special = o + 0x70000000u;                                      // inf / NaN: exponent all ones
  const uint32_t sub = bitsOf(floatOf(o + 0x38800000u) - floatOf(0x38800000u));  // exact: m * 2^-24
  const uint32_t isSpecial = maskIf(exp == 0x0f800000u), isSub = maskIf(exp == 0);
  const uint32_t r = (special & isSpecial) | (sub & isSub) | (normal & ~(isSpecial | isSub));
  return floatOf(r | (uint32_t(h & 0x8000u) << 16));
}

inline uint16_t toBf16(uint32_t u) {
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x40u;
  const uint32_t isNan = maskIf((u & 0x7fffffffu) > 0x7f800000u);
  return uint16_t((nan & isNan) | (rounded & ~isNan));
}

inline float fromBf16(uint16_t h) { return floatOf(uint32_t(h) << 16); }

template <class In, class Out, class F>
void convert(const In* in, size_t n, Out* out, int threads, const char* who, F f) {
  if (n > 0 && (!in || !out)) throw KernelError(std::string(who) + ": null pointer");
  const int nt = resolveThreads(threads, n);
  if (nt == 1) {
    for (size_t i = 0; i < n; ++i) out[i] = f(in[i]);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 64);
    for (size_t i = r.begin; i < r.end; ++i) out[i] = f(in[i]);
  }
}

}  // namespace

uint16_t floatToHalf(float v) { return toHalf(bitsOf(v)); }
float halfToFloat(uint16_t h) { return fromHalf(h); }
uint16_t floatToBf16(float v) { return toBf16(bitsOf(v)); }
float bf16ToFloat(uint16_t h) { return fromBf16(h); }

void floatToHalf(const float* x, size_t n, uint16_t* out, int threads) {
  convert(x, n, out, threads, "floatToHalf", [](float v) { return toHalf(bitsOf(v)); });
}
void halfToFloat(const uint16_t* in, size_t n, float* out, int threads) {
  convert(in, n, out, threads, "halfToFloat", [](uint16_t h) { return fromHalf(h); });
}
void floatToBf16(const float* x, size_t n, uint16_t* out, int threads) {
  convert(x, n, out, threads, "floatToBf16", [](float v) { return toBf16(bitsOf(v)); });
}
void bf16ToFloat(const uint16_t* in, size_t n, float* out, int threads) {
  convert(in, n, out, threads, "bf16ToFloat", [](uint16_t h) { return fromBf16(h); });
}

}  // namespace ps::kernels
