#include "engine/kernels/Sign.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/BlockSum.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ps::kernels {

namespace {

constexpr size_t kSumBlock = size_t(1) << 16;  // Σ|x| is summed per fixed block, so threads never change it

PS_SIMD_CLONES double absSum(const float* x, size_t b, size_t e) {
  return blockSum(x, b, e, [](float v) { return double(std::fabs(v)); });
}

// Bytes [b, e) of the packed signs: byte j holds x[8j .. 8j+7].
void packRange(const float* x, size_t n, size_t b, size_t e, uint8_t* out) {
  size_t j = b;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; j < e && 8 * j + 8 <= n; ++j) {
    const int lo = _mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(x + 8 * j), zero));
    const int hi = _mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(x + 8 * j + 4), zero));
    out[j] = uint8_t(lo | hi << 4);
  }
#endif
  for (; j < e; ++j) {
    uint8_t v = 0;
    for (size_t i = 8 * j; i < std::min(8 * j + 8, n); ++i) v |= uint8_t(x[i] >= 0.f) << (i - 8 * j);
    out[j] = v;
  }
}

// Elements [8b, min(8e, n)) from bytes [b, e).
void unpackRange(const uint8_t* in, size_t n, size_t b, size_t e, float scale, float* out) {
  size_t j = b;
#if defined(__SSE2__)
  const __m128i bitsLo = _mm_setr_epi32(1, 2, 4, 8), bitsHi = _mm_setr_epi32(16, 32, 64, 128);
  const __m128 pos = _mm_set1_ps(scale), neg = _mm_set1_ps(-scale);
  for (; j < e && 8 * j + 8 <= n; ++j) {
    const __m128i v = _mm_set1_epi32(in[j]);
    const __m128 mLo = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(v, bitsLo), bitsLo));
    const __m128 mHi = _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(v, bitsHi), bitsHi));
    _mm_storeu_ps(out + 8 * j, _mm_or_ps(_mm_and_ps(mLo, pos), _mm_andnot_ps(mLo, neg)));
    _mm_storeu_ps(out + 8 * j + 4, _mm_or_ps(_mm_and_ps(mHi, pos), _mm_andnot_ps(mHi, neg)));
  }
#endif
  for (; j < e; ++j)
    for (size_t i = 8 * j; i < std::min(8 * j + 8, n); ++i) out[i] = (in[j] >> (i - 8 * j) & 1u) ? scale : -scale;
}

}  // namespace

double signPack(const float* x, size_t n, uint8_t* out, int threads) {
  if (n == 0) return 0;
  require(x && out, "signPack: null pointer");
  const size_t bytes = packedBytes(n, 1), blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<double> sums(blocks);
  const int nt = resolveThreads(threads, n);
#pragma omp parallel num_threads(nt)
  {
#pragma omp for schedule(static) nowait
    for (int64_t bl = 0; bl < int64_t(blocks); ++bl)
      sums[size_t(bl)] = absSum(x, size_t(bl) * kSumBlock, std::min(n, size_t(bl + 1) * kSumBlock));
#pragma omp for schedule(static)
    for (int t = 0; t < nt; ++t) {
      const Range r = chunkOf(bytes, nt, t);
      packRange(x, n, r.begin, r.end, out);
    }
  }
  double total = 0;
  for (double s : sums) total += s;
  return total;
}

void signUnpack(const uint8_t* in, size_t inBytes, size_t n, float scale, float* out, int threads) {
  if (n == 0) return;
  require(in && out, "signUnpack: null pointer");
  const size_t bytes = checkPackedCodes(in, inBytes, n, 1, "signUnpack");
  const int nt = resolveThreads(threads, n);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(bytes, nt, t);
    unpackRange(in, n, r.begin, r.end, scale, out);
  }
}

}  // namespace ps::kernels
