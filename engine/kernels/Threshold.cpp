#include "engine/kernels/Threshold.h"

#include "engine/kernels/Compress.h"
#include "engine/kernels/GaussianSearch.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Random.h"
#include "engine/kernels/Simd.h"
#include "engine/kernels/TopK.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace ps::kernels {

namespace {

constexpr uint32_t kAbsMask = 0x7fffffffu;

// |x| > t is an integer compare of the magnitude bits (Compress.h); valid for thresholds >= 0. NaN bit patterns are
// above +inf, so NaN counts as above every threshold.
size_t countRange(const float* x, Range r, uint32_t T) { return countAboveKey(x, r.begin, r.end, T); }

// Writes the first `quota` winners of chunk r at (idx, val); returns the number of winners in r, counting on
// without writing once the quota is full. Blocks are selected straight into the output while a whole block plus
// the selection slack fits below the quota, and through a small buffer near its end.
size_t collectRange(const float* x, Range r, uint32_t T, uint32_t* idx, float* val, size_t quota) {
  constexpr size_t kBlock = 1024;
  size_t written = 0, b = r.begin;
  for (; b < r.end && written + kBlock + kSelectSlack <= quota; b += kBlock)
    written += selectAboveWithValues(x, b, std::min(b + kBlock, r.end), T, idx + written, val + written);
  uint32_t buf[kBlock + kSelectSlack];
  float vbuf[kBlock + kSelectSlack];
  for (; b < r.end && written < quota; b += kBlock) {
    const size_t w = selectAboveWithValues(x, b, std::min(b + kBlock, r.end), T, buf, vbuf);
    const size_t c = std::min(w, quota - written);
    std::memcpy(idx + written, buf, c * sizeof(uint32_t));
    std::memcpy(val + written, vbuf, c * sizeof(float));
    written += w;  // may pass the quota on the last block: counts, not writes
  }
  return written + (b < r.end ? countRange(x, {b, r.end}, T) : 0);
}

void checkInput(const float* x, size_t n, const char* who) {
  if (n > kMaxElements) throw KernelError(std::string(who) + ": n exceeds 2^32 - 1");
  if (n > 0 && !x) throw KernelError(std::string(who) + ": null input");
}

// Sets *T to the threshold's magnitude key; returns false instead when every element is above (t < 0).
bool thresholdKey(float t, uint32_t* T, const char* who) {
  if (std::isnan(t)) throw KernelError(std::string(who) + ": NaN threshold");
  if (t < 0) return false;
  std::memcpy(T, &t, 4);
  *T &= kAbsMask;  // -0.0 is 0
  return true;
}

// Sums of d = x - shift and d^2 over r: in float over blocks of 256 elements (plain float adds in every vector lane:
// 4 with SSE2, 8 in the AVX2 clone), block results accumulated in double. At most 64 terms per lane and block, so
// the relative error stays about 4e-6 at worst; the lane count changes the last bits between CPUs, which only moves
// GaussianK's threshold estimate (the sender's own choice), never a decoded value.
template <bool kFiniteOnly>
PS_ALWAYS_INLINE void momentSums(const float* x, Range r, float shift, double* s0, double* s1, double* s2) {
  double c = 0, a = 0, q = 0;
  for (size_t b = r.begin; b < r.end; b += 256) {
    const size_t e = std::min(b + 256, r.end);
    float bc = 0, ba = 0, bq = 0;
#pragma omp simd reduction(+ : bc, ba, bq)
    for (size_t i = b; i < e; ++i) {
      const float d = x[i] - shift;
      if (kFiniteOnly) {
        const bool ok = std::fabs(x[i]) <= FLT_MAX;
        bc += ok ? 1.f : 0.f;
        ba += ok ? d : 0.f;
        bq += ok ? d * d : 0.f;
      } else {
        ba += d;
        bq += d * d;
      }
    }
    c += bc, a += ba, q += bq;
  }
  *s0 = kFiniteOnly ? c : double(r.size());
  *s1 = a;
  *s2 = q;
}

// The cloned entry points (target_clones takes plain functions only: Clang refuses templates).
PS_SIMD_CLONES void momentSumsAll(const float* x, Range r, float shift, double* s0, double* s1, double* s2) {
  momentSums<false>(x, r, shift, s0, s1, s2);
}
PS_SIMD_CLONES void momentSumsFinite(const float* x, Range r, float shift, double* s0, double* s1, double* s2) {
  momentSums<true>(x, r, shift, s0, s1, s2);
}

template <bool kFiniteOnly>
Moments momentsImpl(const float* x, size_t n, int threads) {
  float shift = 0;
  if (kFiniteOnly) {
    for (size_t i = 0; i < n; ++i)
      if (std::isfinite(x[i])) {
        shift = x[i];
        break;
      }
  } else {
    shift = x[0];
  }
  const int nt = resolveThreads(threads, n);
  std::vector<double> part(3 * size_t(nt));
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    double* p = part.data() + 3 * size_t(t);
    if constexpr (kFiniteOnly) momentSumsFinite(x, chunkOf(n, nt, t), shift, p, p + 1, p + 2);
    else momentSumsAll(x, chunkOf(n, nt, t), shift, p, p + 1, p + 2);
  }
  double c = 0, a = 0, q = 0;
  for (int t = 0; t < nt; ++t) {
    c += part[3 * size_t(t)];
    a += part[3 * size_t(t) + 1];
    q += part[3 * size_t(t) + 2];
  }
  if (c == 0) return {0.0, 0.0};
  const double mean = double(shift) + a / c;
  const double var = c > 1 ? std::max(0.0, (q - a * a / c) / (c - 1)) : 0.0;
  return {mean, std::sqrt(var)};
}

size_t targetCount(size_t n, double K) { return std::max<size_t>(1, size_t(std::llround(K * double(n)))); }

// gatherAbove's per-chunk spill buffers (chunks after the first), owned by the calling thread and reused.
// One chunk's winners: grown by doubling (contents kept, nothing zero-filled), so the selection writes straight in.
struct SpillBuffer {
  std::unique_ptr<uint32_t[]> index;
  std::unique_ptr<float[]> value;
  size_t size = 0, capacity = 0;

  void room(size_t more) {
    if (size + more <= capacity) return;
    const size_t c = std::max(size + more, 2 * capacity);
    std::unique_ptr<uint32_t[]> i(new uint32_t[c]);
    std::unique_ptr<float[]> v(new float[c]);
    if (size) {
      std::memcpy(i.get(), index.get(), size * sizeof(uint32_t));
      std::memcpy(v.get(), value.get(), size * sizeof(float));
    }
    index = std::move(i), value = std::move(v), capacity = c;
  }
  void releaseIfOversized() {  // kept between calls, unless far bigger than this call needed
    if (capacity > std::max(size_t(4) << 20, 4 * size)) *this = SpillBuffer();
  }
};
using Spill = std::vector<SpillBuffer>;
thread_local Spill tlsSpill;

}  // namespace

size_t countAbove(const float* x, size_t n, float threshold, int threads) {
  checkInput(x, n, "countAbove");
  uint32_t T;
  if (!thresholdKey(threshold, &T, "countAbove")) return n;
  const int nt = resolveThreads(threads, n);
  if (nt == 1) return countRange(x, {0, n}, T);
  size_t total = 0;
#pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(+ : total)
  for (int t = 0; t < nt; ++t) total += countRange(x, chunkOf(n, nt, t), T);
  return total;
}

size_t gatherAbove(const float* x, size_t n, float threshold, uint32_t* indices, float* values, size_t capacity,
                   int threads) {
  checkInput(x, n, "gatherAbove");
  require(capacity == 0 || (indices && values), "gatherAbove: null output");
  uint32_t T = 0;
  const bool all = !thresholdKey(threshold, &T, "gatherAbove");
  const int nt = resolveThreads(threads, n);
  if (all) {  // a negative threshold keeps everything
    const size_t m = std::min(n, capacity);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < int64_t(m); ++i) {
      indices[i] = uint32_t(i);
      values[i] = x[i];
    }
    return n;
  }
  if (nt == 1) return collectRange(x, {0, n}, T, indices, values, capacity);
  // One pass: the first chunk writes straight to the output (its winners come first); the others compact theirs
  // into spill buffers, copied to their offsets once the counts are known.
  Spill& S = tlsSpill;
  S.resize(size_t(nt));
  std::vector<size_t> offset(size_t(nt) + 1, 0);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t);
    if (t == 0) {
      offset[1] = collectRange(x, r, T, indices, values, capacity);
      continue;
    }
    SpillBuffer& B = S[size_t(t)];
    B.size = 0;
    for (size_t b = r.begin; b < r.end; b += 1024) {
      B.room(1024 + kSelectSlack);
      B.size += selectAboveWithValues(x, b, std::min(b + 1024, r.end), T, B.index.get() + B.size,
                                      B.value.get() + B.size);
    }
    offset[size_t(t) + 1] = B.size;
  }
  for (int t = 0; t < nt; ++t) offset[size_t(t) + 1] += offset[size_t(t)];
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 1; t < nt; ++t) {
    const size_t b = std::min(offset[size_t(t)], capacity), e = std::min(offset[size_t(t) + 1], capacity);
    if (e > b) {
      std::memcpy(indices + b, S[size_t(t)].index.get(), (e - b) * sizeof(uint32_t));
      std::memcpy(values + b, S[size_t(t)].value.get(), (e - b) * sizeof(float));
    }
  }
  for (int t = 1; t < nt; ++t) S[size_t(t)].releaseIfOversized();
  return offset[size_t(nt)];
}

Moments moments(const float* x, size_t n, int threads) {
  checkInput(x, n, "moments");
  require(n > 0, "moments: empty input");
  return momentsImpl<false>(x, n, threads);
}

size_t gaussianTarget(size_t n, double K) {
  require(K > 0.0 && K <= 1.0, "gaussianThreshold: K must be in (0, 1]");
  return targetCount(n, K);
}

double gaussianQuantile(double K) {
  require(K > 0.0 && K <= 1.0, "gaussianThreshold: K must be in (0, 1]");
  return inverseNormalCdf(1.0 - K / 2.0);
}

double inverseNormalCdf(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw KernelError("inverseNormalCdf: p must be in [0, 1]");
  if (p == 0.0) return -INFINITY;
  if (p == 1.0) return INFINITY;
  if (p > 0.5) return -inverseNormalCdf(1.0 - p);  // 1 - p is exact here (Sterbenz); the lower tail refines best
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {  // lower tail
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else {  // central region
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // One Halley step on Φ(x) - p (Acklam's refinement); Φ(x) = erfc(-x/√2)/2 is accurate for x <= 0.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * 2.5066282746310002 /* √(2π) */ * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

namespace {

// The GaussianK threshold search shared by gaussianThreshold and gaussianGather: `measure(t)` returns
// #{|x| > t}. As the authors' loop runs it: at most three selections; after each one outside [2k/3, 4k/3] the
// threshold moves, but the move after the third selection is never used, so the set kept is the third one selected.
template <typename Measure>
float gaussianSearch(size_t n, double K, Moments m, size_t* count, Measure&& measure) {
  require(n > 0, "gaussianThreshold: empty input");
  require(K > 0.0 && K <= 1.0, "gaussianThreshold: K must be in (0, 1]");
  const size_t k = targetCount(n, K);
  float t = firstGaussianThreshold(m.mean, m.stddev, gaussianQuantile(K));
  size_t c = measure(t);
  for (int selections = 1; selections < kGaussianSelections && moveGaussianThreshold(c, k, &t); ++selections)
    c = measure(t);
  *count = c;
  return t;
}

Moments checkedMoments(const float* x, size_t n, double K, int threads);

}  // namespace

Moments gaussianMoments(const float* x, size_t n, int threads) {
  checkInput(x, n, "gaussianThreshold");
  require(n > 0, "gaussianThreshold: empty input");
  Moments m = momentsImpl<false>(x, n, threads);
  if (!std::isfinite(m.mean) || !std::isfinite(m.stddev)) m = momentsImpl<true>(x, n, threads);
  return m;
}

namespace {

Moments checkedMoments(const float* x, size_t n, double K, int threads) {
  require(K > 0.0 && K <= 1.0, "gaussianThreshold: K must be in (0, 1]");
  return gaussianMoments(x, n, threads);
}

}  // namespace

float gaussianThreshold(const float* x, size_t n, double K, size_t* count, int threads) {
  size_t c = 0;
  const float t =
      gaussianSearch(n, K, checkedMoments(x, n, K, threads), &c, [&](float t) { return countAbove(x, n, t, threads); });
  if (count) *count = c;
  return t;
}

size_t gaussianGather(const float* x, size_t n, double K, uint32_t* indices, float* values, size_t capacity,
                      float* threshold, int threads) {
  require(capacity == 0 || (indices && values), "gaussianGather: null output");
  size_t c = 0;
  const float t = gaussianSearch(n, K, checkedMoments(x, n, K, threads), &c,
                                 [&](float t) { return gatherAbove(x, n, t, indices, values, capacity, threads); });
  if (threshold) *threshold = t;
  return c;
}

thread_local std::vector<float> tlsSample;
thread_local std::vector<uint64_t> tlsDrawn;  // bitmap of drawn positions; all zero between calls

namespace {

// Floyd's algorithm: m distinct positions in m draws, marked in a bitmap that is cleared again afterwards by the
// positions themselves (no pass over n bits per call). `visit(s, position)` sees the s-th draw.
template <typename Visit>
void drawSample(size_t n, size_t m, uint64_t seed, Visit&& visit) {
  std::vector<uint64_t>& drawn = tlsDrawn;
  if (drawn.size() < (n + 63) / 64) drawn.assign((n + 63) / 64, 0);
  auto mark = [&](size_t i) {
    const uint64_t bit = uint64_t(1) << (i & 63);
    const bool was = drawn[i >> 6] & bit;
    drawn[i >> 6] |= bit;
    return !was;
  };
  std::mt19937_64 gen(seed);
  for (size_t j = n - m, s = 0; j < n; ++j, ++s) {
    const size_t t = size_t(uniformBelow(gen, j + 1));
    visit(s, mark(t) ? t : (mark(j), j));
  }
  // Clear: replay the draws.
  gen.seed(seed);
  for (size_t j = n - m; j < n; ++j) {
    const size_t t = size_t(uniformBelow(gen, j + 1));
    drawn[t >> 6] &= ~(uint64_t(1) << (t & 63));
    drawn[j >> 6] &= ~(uint64_t(1) << (j & 63));
  }
  // One bit per element is 8 MB at 64M floats: a bitmap four times larger than this call needed and over 16 MB is
  // given back rather than kept for the thread's life.
  if (drawn.size() > 4 * ((n + 63) / 64) && drawn.size() * 8 > (16u << 20)) std::vector<uint64_t>().swap(drawn);
}

size_t sampleSize(size_t n, double K, double sampleFraction, const char* who) {
  const char* bad = n == 0                                             ? ": empty input"
                    : !(K > 0.0 && K <= 1.0)                           ? ": K must be in (0, 1]"
                    : !(sampleFraction > 0.0 && sampleFraction <= 1.0) ? ": sampleFraction must be in (0, 1]"
                    : n > kMaxElements                                 ? ": n exceeds 2^32 - 1"
                                                                       : nullptr;
  if (bad) throw KernelError(std::string(who) + bad);
  return std::min(n, targetCount(n, sampleFraction));
}

}  // namespace

float sampleThreshold(const float* sample, size_t m, size_t n, double K, int threads) {
  checkInput(sample, m, "sampleThreshold");
  require(m > 0 && m <= n, "sampleThreshold: empty sample, or larger than its tensor");
  require(K > 0.0 && K <= 1.0, "sampleThreshold: K must be in (0, 1]");
  // The full tensor's k applied to the sample (DGC as the Gaussian-k authors run it): a low threshold on purpose.
  const float t = kthLargestAbs(sample, m, std::min(m, targetCount(n, K)), threads);
  return std::isnan(t) ? INFINITY : t;
}

float sampledThreshold(const float* x, size_t n, double K, double sampleFraction, uint64_t seed, int threads) {
  checkInput(x, n, "sampledThreshold");
  const size_t m = sampleSize(n, K, sampleFraction, "sampledThreshold");
  std::vector<float>& sample = tlsSample;
  sample.resize(m);
  drawSample(n, m, seed, [&](size_t s, size_t pick) { sample[s] = x[pick]; });
  return sampleThreshold(sample.data(), m, n, K, threads);
}

void samplePositions(size_t n, double sampleFraction, uint64_t seed, std::vector<uint32_t>& positions) {
  const size_t m = sampleSize(n, 1.0, sampleFraction, "samplePositions");
  positions.resize(m);
  drawSample(n, m, seed, [&](size_t s, size_t pick) { positions[s] = uint32_t(pick); });
}

}  // namespace ps::kernels
