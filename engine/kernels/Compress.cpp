#include "engine/kernels/Compress.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
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

}  // namespace

size_t selectAbove(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out) {
  return selectBetween<false>(x, b, e, T + 1, 0, out);
}

size_t selectInRange(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out) {
  if (lo > hi) return 0;
  return selectBetween<true>(x, b, e, lo, hi, out);
}

size_t countAboveKey(const float* x, size_t b, size_t e, uint32_t T) {
  size_t total = 0;
  for (size_t s = b; s < e; s += 65536) {  // 32-bit lanes per block so the loop vectorises
    const size_t f = std::min(s + 65536, e);
    uint32_t c = 0;
    for (size_t i = s; i < f; ++i) c += absBits(x, i) > T;
    total += c;
  }
  return total;
}

}  // namespace ps::kernels
