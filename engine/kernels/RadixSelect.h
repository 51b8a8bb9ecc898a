#pragma once
// Internal to TopK.cpp: the radix select itself, over two kinds of element sources.
//
//   Dense  every element of each thread's chunk of x.
//   Lists  per chunk, ascending candidate indices and their values (TopK.cpp pre-filters with a sampled bound).
//
// select() runs one histogram pass per radix digit. Each thread histograms its own chunk; the merged histogram
// names the bucket holding the wanted rank, and the per-chunk counts above/at the final key tell every chunk how
// many winners it has, so the collection writes each chunk's winners straight to their place.
#include "engine/kernels/Compress.h"
#include "engine/kernels/Parallel.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ps::kernels::radix {

constexpr uint32_t kInfKey = 0x7f800000u;
constexpr uint32_t kNanKey = 0x7fc00000u;

// |x| bits with every NaN mapped to one quiet NaN above +inf.
inline uint32_t keyOf(const float* x, size_t i) {
  uint32_t b;
  std::memcpy(&b, x + i, 4);
  b &= 0x7fffffffu;
  return b > kInfKey ? kNanKey : b;
}

// One digit: bits [shift, shift + width) of the key. Wide digits for many elements (2 passes), narrow for few.
struct Level {
  int shift, width;
};
inline int levelsFor(size_t count, Level* lv) {
  if (count >= (size_t(1) << 16)) {
    lv[0] = {15, 16}, lv[1] = {0, 15};
    return 2;
  }
  lv[0] = {20, 11}, lv[1] = {10, 10}, lv[2] = {0, 10};
  return 3;
}

// Histogram of digit lv over the keys in [lo, hi] (the keys that share the prefix found so far).
struct Dense {
  const float* x;
  size_t n;
  int nt;

  void histogram(int t, Level lv, uint32_t lo, uint32_t hi, uint32_t* h) const {
    const Range r = chunkOf(n, nt, t);
    const uint32_t mask = (1u << lv.width) - 1;
    std::memset(h, 0, sizeof(uint32_t) << lv.width);
    if (lo == 0 && hi == 0x7fffffffu) {  // first digit: everything
      for (size_t i = r.begin; i < r.end; ++i) ++h[keyOf(x, i) >> lv.shift];
    } else if (hi <= kInfKey) {  // few matches: vectorised compaction, then histogram the matches
      uint32_t buf[1024 + kSelectSlack];
      for (size_t b = r.begin; b < r.end; b += 1024) {
        const size_t c = selectInRange(x, b, std::min(b + 1024, r.end), lo, hi, buf);
        for (size_t j = 0; j < c; ++j) ++h[(keyOf(x, buf[j]) >> lv.shift) & mask];
      }
    } else {  // the NaN/inf end of the order: canonical keys, one by one
      for (size_t i = r.begin; i < r.end; ++i) {
        const uint32_t k = keyOf(x, i);
        if (k >= lo && k <= hi) ++h[(k >> lv.shift) & mask];
      }
    }
  }

};

// Candidates carry their value next to their index, so the passes after the pre-filter read two sequential arrays
// instead of gathering from x.
struct Lists {
  int nt;
  const uint32_t* const* index;
  const float* const* value;
  const size_t* count;

  void histogram(int t, Level lv, uint32_t lo, uint32_t hi, uint32_t* h) const {
    const uint32_t mask = (1u << lv.width) - 1;
    std::memset(h, 0, sizeof(uint32_t) << lv.width);
    const float* v = value[t];
    for (size_t j = 0; j < count[t]; ++j) {
      const uint32_t k = keyOf(v, j);
      if (k >= lo && k <= hi) ++h[(k >> lv.shift) & mask];
    }
  }
};

// The exact k-th largest key, how many keys equal to it the top k takes, and per chunk the keys above / equal.
struct Selection {
  uint32_t key = 0;
  size_t ties = 0;
  std::vector<size_t> gt, eq;
};

// `total` elements in the source, 1 <= k <= total; H holds nt histograms of `stride` >= 2^16 counters.
template <class Src>
Selection select(const Src& src, size_t total, size_t k, int nt, uint32_t* H, size_t stride) {
  Level lv[3];
  const int levels = levelsFor(total, lv);
  Selection s;
  s.gt.assign(size_t(nt), 0);
  s.eq.assign(size_t(nt), 0);
  uint32_t prefix = 0;
  size_t need = k;  // rank of the wanted key among the keys that share `prefix`
  for (int l = 0; l < levels; ++l) {
    const Level L = lv[l];
    const int hs = L.shift + L.width;
    const uint32_t lo = hs >= 31 ? 0 : prefix << hs;
    const uint32_t hi = lo | uint32_t((uint64_t(1) << hs) - 1);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; ++t) src.histogram(t, L, lo, hi, H + stride * size_t(t));
    // Walk the merged buckets from the top until the wanted rank falls inside one.
    const uint32_t buckets = 1u << L.width;
    uint32_t b = buckets;
    size_t above = 0;
    while (b > 0) {
      --b;
      size_t c = 0;
      for (int t = 0; t < nt; ++t) c += H[stride * size_t(t) + b];
      if (above + c >= need) break;
      above += c;
    }
    for (int t = 0; t < nt; ++t) {
      const uint32_t* h = H + stride * size_t(t);
      size_t a = 0;
      for (uint32_t j = b + 1; j < buckets; ++j) a += h[j];
      s.gt[size_t(t)] += a;
      if (l == levels - 1) s.eq[size_t(t)] = h[b];
    }
    need -= above;
    prefix = (prefix << L.width) | b;
  }
  s.key = prefix;
  s.ties = need;
  return s;
}

// Writes the winners of chunk t (keys above T, then the first `ties` keys equal to T, in index order) to (idx, val),
// at most `quota` of them whatever the data. Branch-free: every element is written at the cursor, which advances
// only for winners (the one test left, the quota, only changes its answer once).
struct Winners {
  uint32_t T;
  size_t ties;
  uint32_t* idx;
  float* val;
  size_t quota, written = 0;

  void add(uint32_t i, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits &= 0x7fffffffu;
    const uint32_t k = bits > kInfKey ? kNanKey : bits;
    const size_t eq = k == T;
    const size_t take = size_t(k > T) | (eq & size_t(ties != 0));
    ties -= eq & take;
    if (written < quota) {  // predictable: false only once the quota is reached
      idx[written] = i;
      val[written] = v;
      written += take;
    }
  }
};

inline void collect(const Lists& l, int t, uint32_t T, size_t ties, size_t, uint32_t* idx, float* val,
                    size_t quota) {
  Winners w{T, ties, idx, val, quota};
  const uint32_t* I = l.index[t];
  const float* V = l.value[t];
  for (size_t j = 0; j < l.count[t]; ++j) w.add(I[j], V[j]);
}

// Dense chunks with no partial ties use the vectorised compaction: keys > G, G <= the key of +inf.
inline void collectDenseAbove(const Dense& d, int t, uint32_t G, uint32_t* idx, float* val, size_t quota) {
  const Range r = chunkOf(d.n, d.nt, t);
  uint32_t buf[1024 + kSelectSlack];
  size_t written = 0;
  for (size_t b = r.begin; b < r.end && written < quota; b += 1024) {
    const size_t c = std::min(selectAbove(d.x, b, std::min(b + 1024, r.end), G, buf), quota - written);
    for (size_t j = 0; j < c; ++j) idx[written + j] = buf[j], val[written + j] = d.x[buf[j]];
    written += c;
  }
}

inline void collect(const Dense& d, int t, uint32_t T, size_t ties, size_t eq, uint32_t* idx, float* val,
                    size_t quota) {
  if (ties == 0 && T <= kInfKey) return collectDenseAbove(d, t, T, idx, val, quota);                   // > T
  if (ties == eq && T >= 1 && T - 1 <= kInfKey) return collectDenseAbove(d, t, T - 1, idx, val, quota);  // >= T
  Winners w{T, ties, idx, val, quota};
  const Range r = chunkOf(d.n, d.nt, t);
  for (size_t i = r.begin; i < r.end; ++i) w.add(uint32_t(i), d.x[i]);
}

}  // namespace ps::kernels::radix
