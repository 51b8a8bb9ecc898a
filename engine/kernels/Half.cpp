#include "engine/kernels/Half.h"

#include "engine/kernels/FloatBits.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ps::kernels {

namespace {

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
  const uint32_t special = (o + 0x70000000u) | ((o & 0x007fe000u) ? 0x00400000u : 0u);  // inf; NaN made quiet
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

// The F16C instructions (x86-64 CPUs since 2012) convert 8 values per instruction with the same rounding, and the
// same NaN results as the code above; they are used when the CPU has them (checked at run time, so the library
// still runs on any x86-64) and the portable loop otherwise.
#if defined(__x86_64__) && defined(__GNUC__)
#define PS_KERNELS_F16C 1
__attribute__((target("avx,f16c"))) void toHalfF16c(const float* x, size_t b, size_t e, uint16_t* out) {
  size_t i = b;
  for (; i + 8 <= e; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < e; ++i) out[i] = toHalf(bitsOf(x[i]));
}
__attribute__((target("avx,f16c"))) void fromHalfF16c(const uint16_t* h, size_t b, size_t e, float* out) {
  size_t i = b;
  for (; i + 8 <= e; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  for (; i < e; ++i) out[i] = fromHalf(h[i]);
}
// cpuid rather than __builtin_cpu_supports("f16c"), which clang 14 does not know (the fuzzer builds with clang).
bool cpuHasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_F16C)) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));  // the OS saves the AVX registers
  return (lo & 6u) == 6u;
}
const bool kCpuHasF16c = cpuHasF16c();
std::atomic<bool> gUseF16c{kCpuHasF16c};
#endif

// Runs body(begin, end) over [0, n), split over threads for big n.
template <class Body>
void forRanges(size_t n, int threads, Body body) {
  const int nt = resolveThreads(threads, n);
  if (nt == 1) return body(size_t(0), n);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 64);
    body(r.begin, r.end);
  }
}

template <class In, class Out, class F>
void convert(const In* in, size_t n, Out* out, int threads, const char* who, F f) {
  if (n > 0 && (!in || !out)) throw KernelError(std::string(who) + ": null pointer");
  forRanges(n, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) out[i] = f(in[i]);
  });
}

}  // namespace

bool useF16c(bool enable) {
#ifdef PS_KERNELS_F16C
  gUseF16c = enable && kCpuHasF16c;
  return kCpuHasF16c;
#else
  (void)enable;
  return false;
#endif
}

uint16_t floatToHalf(float v) { return toHalf(bitsOf(v)); }
float halfToFloat(uint16_t h) { return fromHalf(h); }
uint16_t floatToBf16(float v) { return toBf16(bitsOf(v)); }
float bf16ToFloat(uint16_t h) { return fromBf16(h); }

void floatToHalf(const float* x, size_t n, uint16_t* out, int threads) {
#ifdef PS_KERNELS_F16C
  if (gUseF16c.load(std::memory_order_relaxed)) {
    if (n > 0 && (!x || !out)) throw KernelError("floatToHalf: null pointer");
    return forRanges(n, threads, [&](size_t b, size_t e) { toHalfF16c(x, b, e, out); });
  }
#endif
  convert(x, n, out, threads, "floatToHalf", [](float v) { return toHalf(bitsOf(v)); });
}
void halfToFloat(const uint16_t* in, size_t n, float* out, int threads) {
#ifdef PS_KERNELS_F16C
  if (gUseF16c.load(std::memory_order_relaxed)) {
    if (n > 0 && (!in || !out)) throw KernelError("halfToFloat: null pointer");
    return forRanges(n, threads, [&](size_t b, size_t e) { fromHalfF16c(in, b, e, out); });
  }
#endif
  convert(in, n, out, threads, "halfToFloat", [](uint16_t h) { return fromHalf(h); });
}
void floatToBf16(const float* x, size_t n, uint16_t* out, int threads) {
  convert(x, n, out, threads, "floatToBf16", [](float v) { return toBf16(bitsOf(v)); });
}
void saturateInfinities(uint16_t* h, size_t n, bool bf16) {
  const uint16_t inf = bf16 ? 0x7f80 : 0x7c00;
  for (size_t i = 0; i < n; ++i)
    if ((h[i] & 0x7fff) == inf) h[i] = uint16_t(h[i] - 1);
}

void bf16ToFloat(const uint16_t* in, size_t n, float* out, int threads) {
  convert(in, n, out, threads, "bf16ToFloat", [](uint16_t h) { return fromBf16(h); });
}

}  // namespace ps::kernels
