#include "engine/kernels/GroupStats.h"

#include "engine/kernels/FloatBits.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace ps::kernels {

namespace {

// The reductions run on the floats' bit patterns as integers: compilers vectorise integer min/max reductions
// everywhere, while a float one under `omp simd` is left scalar by some (Clang 14 keeps NaN semantics and gives up).
// Without its sign bit, a float's pattern orders as its magnitude, and every NaN's lies above infinity's.
constexpr uint32_t kMagnitude = 0x7fffffffu, kInfinity = 0x7f800000u;

// A signed key that orders as the float does (negatives flipped below zero; -0 just below +0); its own inverse.
inline int32_t orderKey(uint32_t b) {
  const auto s = static_cast<int32_t>(b);
  return s ^ ((s >> 31) & static_cast<int32_t>(kMagnitude));
}

// max |x| over [b, e), NaN if the range holds a NaN.
PS_SIMD_CLONES float maxAbs(const float* x, size_t b, size_t e) {
  uint32_t m = 0;
#pragma omp simd reduction(max : m)
  for (size_t i = b; i < e; ++i) {
    const uint32_t a = bitsOf(x[i]) & kMagnitude;
    m = a > m ? a : m;
  }
  return m > kInfinity ? NAN : floatOf(m);
}

struct MinMax {
  float lo, hi;
  bool nan;
};

PS_SIMD_CLONES MinMax minMax(const float* x, size_t b, size_t e) {
  int32_t lo = orderKey(kInfinity), hi = orderKey(kInfinity | ~kMagnitude);  // +inf and -inf: an empty range
  uint32_t nan = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(| : nan)
  for (size_t i = b; i < e; ++i) {
    const uint32_t bits = bitsOf(x[i]);
    const int32_t k = orderKey(bits);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
    nan |= uint32_t((bits & kMagnitude) > kInfinity);
  }
  return {floatOf(static_cast<uint32_t>(orderKey(static_cast<uint32_t>(lo)))),
          floatOf(static_cast<uint32_t>(orderKey(static_cast<uint32_t>(hi)))), nan != 0};
}

// + 0.f turns a -0 into +0: which zero a vector min/max keeps depends on the lane order, and the range travels in the
// payload, so it must not differ between the SSE2 and AVX2 paths.
void storeMinMax(MinMax r, float* lo, float* hi) {
  *lo = r.nan ? NAN : r.lo + 0.f;
  *hi = r.nan ? NAN : r.hi + 0.f;
}

void checkArgs(const float* x, size_t n, size_t group, const void* o1, const void* o2, const char* who) {
  if (group == 0) throw KernelError(std::string(who) + ": group must be >= 1");
  if (n > 0 && (!x || !o1 || !o2)) throw KernelError(std::string(who) + ": null pointer");
}

// Runs f(groupIndex, begin, end) for every group, in parallel over groups when there are enough of them; a group
// too big for that is reduced by `split` over chunks instead.
template <class PerGroup, class Split>
void forGroups(size_t n, size_t group, int threads, PerGroup perGroup, Split split) {
  const size_t groups = groupCount(n, group);
  const int nt = resolveThreads(threads, n);
  if (nt == 1) {
    for (size_t g = 0; g < groups; ++g) perGroup(g, g * group, groupEnd(n, group, g));
  } else if (groups >= 4 * size_t(nt)) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t g = 0; g < int64_t(groups); ++g)
      perGroup(size_t(g), size_t(g) * group, groupEnd(n, group, size_t(g)));
  } else {
    for (size_t g = 0; g < groups; ++g) split(g, g * group, groupEnd(n, group, g), nt);
  }
}

}  // namespace

size_t groupCount(size_t n, size_t group) {
  require(group >= 1, "groupCount: group must be >= 1");
  return n / group + (n % group != 0);
}

void groupMaxAbs(const float* x, size_t n, size_t group, float* scales, int threads) {
  checkArgs(x, n, group, scales, scales, "groupMaxAbs");
  forGroups(
      n, group, threads, [&](size_t g, size_t b, size_t e) { scales[g] = maxAbs(x, b, e); },
      [&](size_t g, size_t b, size_t e, int nt) {
        std::vector<float> part(static_cast<size_t>(nt));
#pragma omp parallel for num_threads(nt) schedule(static, 1)
        for (int t = 0; t < nt; ++t) {
          const Range r = chunkOf(e - b, nt, t);
          part[size_t(t)] = maxAbs(x + b, r.begin, r.end);
        }
        float m = 0.f;
        for (float p : part) m = (std::isnan(p) || std::isnan(m)) ? NAN : std::max(m, p);
        scales[g] = m;
      });
}

void groupMinMax(const float* x, size_t n, size_t group, float* mins, float* maxs, int threads) {
  checkArgs(x, n, group, mins, maxs, "groupMinMax");
  forGroups(
      n, group, threads, [&](size_t g, size_t b, size_t e) { storeMinMax(minMax(x, b, e), mins + g, maxs + g); },
      [&](size_t g, size_t b, size_t e, int nt) {
        std::vector<MinMax> part(static_cast<size_t>(nt));
#pragma omp parallel for num_threads(nt) schedule(static, 1)
        for (int t = 0; t < nt; ++t) {
          const Range r = chunkOf(e - b, nt, t);
          part[size_t(t)] = minMax(x + b, r.begin, r.end);
        }
        MinMax all = part[0];
        for (const MinMax& p : part) {
          all.lo = std::min(all.lo, p.lo);
          all.hi = std::max(all.hi, p.hi);
          all.nan = all.nan || p.nan;
        }
        storeMinMax(all, mins + g, maxs + g);
      });
}

namespace {

// File-local behind the public function (see Compress.cpp: Clang before 18 and cloned functions across files).
PS_SIMD_CLONES bool allFiniteImpl(const float* x, size_t n) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, x + i, 4);
    bad |= uint32_t((b & 0x7f800000u) == 0x7f800000u);  // exponent all ones: inf or NaN
  }
  return bad == 0;
}

}  // namespace

bool allFinite(const float* x, size_t n) { return allFiniteImpl(x, n); }

}  // namespace ps::kernels
