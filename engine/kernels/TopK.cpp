#include "engine/kernels/TopK.h"

#include "engine/kernels/Compress.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/RadixSelect.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

namespace ps::kernels {

namespace {

using radix::kInfKey;

// Scratch owned by the calling thread, grown on demand and reused: histograms (nt x 2^16 counters) and the
// candidate lists (index + value). Kept between calls (steady-state training reuses it without page faults), but
// released when it is over 8M slots and more than 4x what the call needed.
struct Scratch {
  std::vector<uint32_t> hist, cand;
  std::vector<float> candValue;
};
thread_local Scratch tlsScratch;
constexpr size_t kStride = size_t(1) << 16;

void releaseIfOversized(Scratch& S, size_t needed) {
  if (S.cand.size() > (size_t(8) << 20) && S.cand.size() > 4 * needed) {
    std::vector<uint32_t>().swap(S.cand);
    std::vector<float>().swap(S.candValue);
  }
}

// A lower bound L on the k-th largest magnitude key from a strided sample of s elements: the sample's key of rank
// r = k/n * s + 4 sqrt(k/n * s) + 8, so about a fraction r/s of the elements (more with ties) are >= L and, but for
// a ~4 sigma event, at least k of them. Returns false when pre-filtering would not pay (k above ~20% of n) or
// cannot work (L is 0, or in the inf/NaN range where the canonical NaN order matters).
bool sampleBound(const float* x, size_t n, size_t k, uint32_t* L, double* fraction) {
  const size_t s = std::min<size_t>(8192, std::max<size_t>(1024, n / 64));
  const double expect = double(k) / double(n) * double(s);
  const size_t r = size_t(std::ceil(expect + 4.0 * std::sqrt(expect) + 8.0));
  if (r * 5 > s) return false;
  std::vector<uint32_t> keys(s);
  for (size_t j = 0; j < s; ++j) {
    uint32_t b;
    std::memcpy(&b, x + (2 * j + 1) * n / (2 * s), 4);
    keys[j] = b & 0x7fffffffu;
  }
  std::nth_element(keys.begin(), keys.begin() + ptrdiff_t(r - 1), keys.end(), std::greater<uint32_t>());
  *L = keys[r - 1];
  // The share of the sample at or above L (more than r/s when L is a value many elements share).
  *fraction = double(std::count_if(keys.begin(), keys.end(), [&](uint32_t v) { return v >= *L; })) / double(s);
  return *L > 0 && *L <= kInfKey;
}

// Per chunk, the ascending indices with |x| key >= L, each chunk into its own slice of the scratch. False when a
// slice overflows (the data is not spread like the sample) or fewer than k candidates come out: then the caller
// runs the dense select instead.
bool gatherCandidates(const float* x, size_t n, size_t k, uint32_t L, double fraction, int nt, Scratch& S,
                      std::vector<const uint32_t*>& lists, std::vector<const float*>& values,
                      std::vector<size_t>& counts, size_t* total, size_t* slots) {
  std::vector<size_t> cap(static_cast<size_t>(nt)), start(size_t(nt) + 1, 0);
  for (int t = 0; t < nt; ++t) {
    const size_t chunk = chunkOf(n, nt, t).size();
    cap[size_t(t)] = std::min(chunk, size_t(double(chunk) * fraction * 1.3) + 4096);
    start[size_t(t) + 1] = start[size_t(t)] + cap[size_t(t)];
  }
  if (S.cand.size() < start[size_t(nt)]) S.cand.resize(start[size_t(nt)]), S.candValue.resize(start[size_t(nt)]);
  *slots = start[size_t(nt)];
  int overflow = 0;
#pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(| : overflow)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t);
    uint32_t* out = S.cand.data() + start[size_t(t)];
    float* outValue = S.candValue.data() + start[size_t(t)];
    uint32_t buf[1024 + kSelectSlack];
    float vbuf[1024 + kSelectSlack];
    size_t c = 0;
    for (size_t b = r.begin; b < r.end; b += 1024) {
      const size_t m = selectAboveWithValues(x, b, std::min(b + 1024, r.end), L - 1, buf, vbuf);
      if (c + m > cap[size_t(t)]) {
        overflow = 1;
        break;
      }
      std::memcpy(out + c, buf, m * sizeof(uint32_t));
      std::memcpy(outValue + c, vbuf, m * sizeof(float));
      c += m;
    }
    counts[size_t(t)] = c;
  }
  *total = 0;
  for (int t = 0; t < nt; ++t) {
    lists[size_t(t)] = S.cand.data() + start[size_t(t)];
    values[size_t(t)] = S.candValue.data() + start[size_t(t)];
    *total += counts[size_t(t)];
  }
  return !overflow && *total >= k;
}

void checkArgs(const float* x, size_t n, const char* who) {
  if (n > kMaxElements) throw KernelError(std::string(who) + ": n exceeds 2^32 - 1");
  if (n > 0 && !x) throw KernelError(std::string(who) + ": null input");
}

// Selection plus, for topkSelect, the collection. `indices`/`values` null: selection only (returns the key).
template <class Src>
uint32_t run(const Src& src, size_t total, size_t k, int nt, uint32_t* H, uint32_t* indices, float* values) {
  const radix::Selection s = radix::select(src, total, k, nt, H, kStride);
  if (!indices) return s.key;
  // Ties go to the lowest indices, i.e. to the first chunks.
  std::vector<size_t> ties(static_cast<size_t>(nt)), offset(size_t(nt) + 1, 0);
  size_t tiesLeft = s.ties;
  for (int t = 0; t < nt; ++t) {
    const size_t u = size_t(t);
    ties[u] = std::min(tiesLeft, s.eq[u]);
    tiesLeft -= ties[u];
    offset[u + 1] = offset[u] + s.gt[u] + ties[u];
  }
  require(offset[size_t(nt)] == k && tiesLeft == 0, "topkSelect: input changed during the selection");
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const size_t u = size_t(t);
    radix::collect(src, t, s.key, ties[u], s.eq[u], indices + offset[u], values + offset[u],
                   offset[u + 1] - offset[u]);
  }
  return s.key;
}

// Pre-filtered when that pays and works, dense otherwise.
uint32_t topk(const float* x, size_t n, size_t k, int threads, uint32_t* indices, float* values) {
  const int nt = resolveThreads(threads, n);
  Scratch& S = tlsScratch;
  if (S.hist.size() < kStride * size_t(nt)) S.hist.resize(kStride * size_t(nt));
  uint32_t L;
  double fraction;
  uint32_t key;
  size_t slots = 0;
  if (n >= (size_t(1) << 16) && sampleBound(x, n, k, &L, &fraction)) {
    std::vector<const uint32_t*> lists(static_cast<size_t>(nt));
    std::vector<const float*> listValues(static_cast<size_t>(nt));
    std::vector<size_t> counts(static_cast<size_t>(nt));
    size_t total;
    if (gatherCandidates(x, n, k, L, fraction, nt, S, lists, listValues, counts, &total, &slots)) {
      const radix::Lists src{nt, lists.data(), listValues.data(), counts.data()};
      key = run(src, total, k, nt, S.hist.data(), indices, values);
      releaseIfOversized(S, slots);
      return key;
    }
  }
  key = run(radix::Dense{x, n, nt}, n, k, nt, S.hist.data(), indices, values);
  releaseIfOversized(S, slots);
  return key;
}

}  // namespace

uint32_t magnitudeKey(float v) { return radix::keyOf(&v, 0); }

size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values, int threads) {
  checkArgs(x, n, "topkSelect");
  k = std::min(k, n);
  if (k == 0) return 0;
  require(indices && values, "topkSelect: null output");
  if (k == n) {
    const int nt = resolveThreads(threads, n);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < int64_t(n); ++i) {
      indices[i] = uint32_t(i);
      values[i] = x[i];
    }
    return n;
  }
  topk(x, n, k, threads, indices, values);
  return k;
}

float kthLargestAbs(const float* x, size_t n, size_t k, int threads) {
  checkArgs(x, n, "kthLargestAbs");
  require(k >= 1 && k <= n, "kthLargestAbs: k must be in [1, n]");
  const uint32_t key = topk(x, n, k, threads, nullptr, nullptr);
  float v;
  std::memcpy(&v, &key, 4);
  return v;
}

}  // namespace ps::kernels
