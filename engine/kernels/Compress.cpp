#include "engine/kernels/Compress.h"

#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(PS_X86_DISPATCH)
#include <immintrin.h>
#endif

namespace ps::kernels {

namespace {

inline uint32_t absBits(const float* x, size_t i) {
  uint32_t b;
  std::memcpy(&b, x + i, 4);
  return b & 0x7fffffffu;
}

// Keys in [lo, hi], branch-free.
size_t selectScalar(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out) {
  size_t w = 0;
  for (size_t i = b; i < e; ++i) {
    const uint32_t k = absBits(x, i);
    out[w] = uint32_t(i);
    w += (k >= lo) & (k <= hi);
  }
  return w;
}

#if defined(__SSE2__)
// For each 4-bit match mask: the lane offsets of the matches, packed to the front.
struct OffsetTable {
  alignas(16) uint32_t lanes[16][4];
  uint8_t count[16];
  constexpr OffsetTable() : lanes{}, count{} {
    for (int m = 0; m < 16; ++m) {
      int c = 0;
      for (int l = 0; l < 4; ++l)
        if (m >> l & 1) lanes[m][c++] = uint32_t(l);
      count[m] = uint8_t(c);
    }
  }
};
constexpr OffsetTable kTable{};

// Lanes with lo < key < hi as a 4-bit mask. Keys are below 2^31, so signed compares are exact (lo may be -1);
// kUpper = false skips the hi test.
template <bool kUpper>
inline int matchMask(const float* x, size_t i, __m128i lo, __m128i hi) {
  const __m128i v =
      _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)), _mm_set1_epi32(0x7fffffff));
  __m128i m = _mm_cmpgt_epi32(v, lo);
  if (kUpper) m = _mm_and_si128(m, _mm_cmpgt_epi32(hi, v));
  return _mm_movemask_ps(_mm_castsi128_ps(m));
}

inline size_t emit(int m, size_t i, uint32_t* out, size_t w) {
  const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(kTable.lanes[m]));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + w), _mm_add_epi32(lanes, _mm_set1_epi32(int32_t(i))));
  return w + kTable.count[m];
}
#endif

// Keys in [lo, hi] with hi <= 0x7ffffffe, or in [lo, 2^31) when !kUpper.
template <bool kUpper>
size_t selectBetween(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out) {
#if defined(__SSE2__)
  const __m128i lov = _mm_set1_epi32(int32_t(lo) - 1), hiv = _mm_set1_epi32(int32_t(hi + 1));
  size_t w = 0, i = b;
  for (; i + 16 <= e; i += 16) {
    const int m0 = matchMask<kUpper>(x, i, lov, hiv), m1 = matchMask<kUpper>(x, i + 4, lov, hiv);
    const int m2 = matchMask<kUpper>(x, i + 8, lov, hiv), m3 = matchMask<kUpper>(x, i + 12, lov, hiv);
    if ((m0 | m1 | m2 | m3) == 0) continue;  // the common case for sparse selections
    w = emit(m0, i, out, w);
    w = emit(m1, i + 4, out, w);
    w = emit(m2, i + 8, out, w);
    w = emit(m3, i + 12, out, w);
  }
  for (; i + 4 <= e; i += 4) w = emit(matchMask<kUpper>(x, i, lov, hiv), i, out, w);
  return w + selectScalar(x, i, e, lo, kUpper ? hi : 0x7fffffffu, out + w);
#else
  return selectScalar(x, b, e, lo, kUpper ? hi : 0x7fffffffu, out);
#endif
}

#if defined(PS_X86_DISPATCH)
// The 8-lane version of the table above: 256 masks, the matching lanes packed to the front (8 KiB).
struct OffsetTable8 {
  alignas(32) uint32_t lanes[256][8];
  uint8_t count[256];
  constexpr OffsetTable8() : lanes{}, count{} {
    for (int m = 0; m < 256; ++m) {
      int c = 0;
      for (int l = 0; l < 8; ++l)
        if (m >> l & 1) lanes[m][c++] = uint32_t(l);
      count[m] = uint8_t(c);
    }
  }
};
constexpr OffsetTable8 kTable8{};

#define PS_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

template <bool kUpper>
PS_AVX2_INLINE int mask8(__m256 v, __m256i lov, __m256i hiv) {
  const __m256i k = _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
  __m256i m = _mm256_cmpgt_epi32(k, lov);
  if (kUpper) m = _mm256_and_si256(m, _mm256_cmpgt_epi32(hiv, k));
  return _mm256_movemask_ps(_mm256_castsi256_ps(m));
}

template <bool kValues>
PS_AVX2_INLINE size_t emit8(int m, size_t i, __m256 v, uint32_t* out, float* values, size_t w) {
  const __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(kTable8.lanes[m]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + w), _mm256_add_epi32(lanes, _mm256_set1_epi32(int32_t(i))));
  if (kValues) _mm256_storeu_ps(values + w, _mm256_permutevar8x32_ps(v, lanes));
  return w + kTable8.count[m];
}

// Keys in (lo, hi) exclusive, like selectBetween's SSE2 path (lo may be -1, hi is only used when kUpper), 8 lanes at
// a time; with kValues the selected floats are permuted into place by the same lane table.
template <bool kUpper, bool kValues>
__attribute__((target("avx2"))) size_t selectAvx2(const float* x, size_t b, size_t e, int32_t lo, int32_t hi,
                                                  uint32_t* out, float* values) {
  const __m256i lov = _mm256_set1_epi32(lo), hiv = _mm256_set1_epi32(hi);
  size_t w = 0, i = b;
  for (; i + 32 <= e; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    const int m0 = mask8<kUpper>(v0, lov, hiv), m1 = mask8<kUpper>(v1, lov, hiv);
    const int m2 = mask8<kUpper>(v2, lov, hiv), m3 = mask8<kUpper>(v3, lov, hiv);
    if ((m0 | m1 | m2 | m3) == 0) continue;  // the common case for sparse selections
    w = emit8<kValues>(m0, i, v0, out, values, w);
    w = emit8<kValues>(m1, i + 8, v1, out, values, w);
    w = emit8<kValues>(m2, i + 16, v2, out, values, w);
    w = emit8<kValues>(m3, i + 24, v3, out, values, w);
  }
  for (; i + 8 <= e; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    w = emit8<kValues>(mask8<kUpper>(v, lov, hiv), i, v, out, values, w);
  }
  const uint32_t ulo = uint32_t(lo + 1), uhi = kUpper ? uint32_t(hi - 1) : 0x7fffffffu;
  const size_t tail = selectScalar(x, i, e, ulo, uhi, out + w);
  if (kValues)
    for (size_t j = w; j < w + tail; ++j) values[j] = x[out[j]];
  return w + tail;
}
#endif

}  // namespace

size_t selectAbove(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out) {
#if defined(PS_X86_DISPATCH)
  if (cpuHasAvx2()) return selectAvx2<false, false>(x, b, e, int32_t(T), 0, out, nullptr);
#endif
  return selectBetween<false>(x, b, e, T + 1, 0, out);
}

size_t selectAboveWithValues(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out, float* values) {
#if defined(PS_X86_DISPATCH)
  if (cpuHasAvx2()) return selectAvx2<false, true>(x, b, e, int32_t(T), 0, out, values);
#endif
  const size_t w = selectBetween<false>(x, b, e, T + 1, 0, out);
  for (size_t j = 0; j < w; ++j) values[j] = x[out[j]];  // x[b, e) is in L1
  return w;
}

size_t selectInRange(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out) {
  if (lo > hi) return 0;
#if defined(PS_X86_DISPATCH)
  if (cpuHasAvx2()) return selectAvx2<true, false>(x, b, e, int32_t(lo) - 1, int32_t(hi + 1), out, nullptr);
#endif
  return selectBetween<true>(x, b, e, lo, hi, out);
}

namespace {

// Cloned functions stay file-local behind plain public ones: Clang before 18 names a cloned function's resolver
// differently, so calls from other files would not link.
PS_SIMD_CLONES size_t countAboveKeyImpl(const float* x, size_t b, size_t e, uint32_t T) {
  size_t total = 0;
  for (size_t s = b; s < e; s += 65536) {  // 32-bit lanes per block so the loop vectorises
    const size_t f = std::min(s + 65536, e);
    uint32_t c = 0;
    for (size_t i = s; i < f; ++i) c += absBits(x, i) > T;
    total += c;
  }
  return total;
}

}  // namespace

size_t countAboveKey(const float* x, size_t b, size_t e, uint32_t T) { return countAboveKeyImpl(x, b, e, T); }

}  // namespace ps::kernels
