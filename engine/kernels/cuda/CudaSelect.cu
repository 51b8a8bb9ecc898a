// Threshold count and ordered gather, radix-select top-k and the k-th largest magnitude (CudaKernels.h).
#include "engine/kernels/cuda/CudaCommon.cuh"
#include "engine/kernels/cuda/CudaKernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ps::kernels::cuda {
namespace {

constexpr int kTile = 4096;  // elements per block in the ordered compaction: 16 per thread

uint32_t hostKey(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return keyOfBits(b);
}

// A threshold as the CPU reads it (Threshold.cpp): NaN is refused, a negative one keeps everything (false), and
// otherwise the selection is key(x) > key(t).
bool thresholdKey(float t, uint32_t* T, const char* who) {
  if (std::isnan(t)) throw std::invalid_argument(std::string(who) + ": NaN threshold");
  if (t < 0) return false;
  *T = hostKey(t);
  return true;
}

// Where a selection stands on the device, so the radix select, the counts and the gather follow each other on the
// stream without a round trip to the host: the key selected so far (all 32 bits once the select is done) and, for
// TopK, how many elements equal to that key to keep (the lowest-indexed ones).
struct SelectState {
  uint32_t key;
  uint32_t mask;
  unsigned long long rank;   // during the select: rank of the wanted key among those matching key/mask; then ties
  unsigned long long total;  // what the gather writes (the scan's sum)
};

__global__ void initSelectKernel(SelectState* st, uint32_t key, unsigned long long rank) {
  st->key = key;
  st->mask = 0;
  st->rank = rank;
  st->total = 0;
}

__global__ void countKernel(const float* x, size_t n, uint32_t T, unsigned long long* count) {
  unsigned local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += magnitudeKey(x[i]) > T;
  local = warpSum(local);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, (unsigned long long)local);
}

// The ordered compaction works on tiles of kTile elements, one block each: warp w of the block owns the
// kItems * 32 consecutive elements from w * kItems * 32, reads them coalesced (item j of lane l is element
// j * 32 + l) and keeps the ballot of each item in registers, so that the order of (warp, item, lane) is the
// order of the indices. Pass 1 counts per tile, a one-block scan turns counts into offsets, pass 2 writes.
constexpr int kWarps = kThreads / 32, kItems = kTile / kThreads;
static_assert(kTile % kThreads == 0, "a tile is a whole number of items per thread");

struct TileMasks {
  uint32_t strict[kItems];  // ballots of key > T
  uint32_t ties[kItems];    // ballots of key == T (TopK only)
  float value[kItems];
};

template <bool kTies>
__device__ __forceinline__ void loadTile(const float* x, size_t n, uint32_t T, TileMasks& m, unsigned& strict,
                                         unsigned& ties) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const size_t base = size_t(blockIdx.x) * kTile + size_t(warp) * kItems * 32;
  strict = ties = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const size_t i = base + size_t(j) * 32 + lane;
    const bool in = i < n;
    const float v = in ? x[i] : 0.f;
    const uint32_t key = magnitudeKey(v);
    m.value[j] = v;
    m.strict[j] = __ballot_sync(kFull, in && key > T);
    strict += __popc(m.strict[j]);
    if (kTies) {
      m.ties[j] = __ballot_sync(kFull, in && key == T);
      ties += __popc(m.ties[j]);
    }
  }
}

// Exclusive prefix over the block's warps of one number per warp (every lane of a warp passes the same value).
__device__ __forceinline__ unsigned warpsBefore(unsigned mine, unsigned* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = mine;
  __syncthreads();
  unsigned before = 0;
  for (int w = 0; w < warp; ++w) before += shared[w];
  __syncthreads();  // `shared` is reused by the next call
  return before;
}

template <bool kTies>
__global__ void tileCountKernel(const float* x, size_t n, const SelectState* st, uint32_t* strictCounts,
                                uint32_t* tieCounts) {
  __shared__ unsigned sums[2][kWarps];
  TileMasks m;
  unsigned strict, ties;
  loadTile<kTies>(x, n, st->key, m, strict, ties);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sums[0][warp] = strict, sums[1][warp] = ties;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned s = 0, t = 0;
    for (int w = 0; w < kWarps; ++w) s += sums[0][w], t += sums[1][w];
    strictCounts[blockIdx.x] = s;
    if (kTies) tieCounts[blockIdx.x] = t;
  }
}

// In place: counts to exclusive offsets, one block walking the tiles kScanThreads at a time; the grand total (of
// what the gather writes) goes to st->total.
constexpr int kScanThreads = 1024;
template <bool kTies>
__global__ void scanTilesKernel(uint32_t* strict, uint32_t* ties, size_t tiles, SelectState* st) {
  __shared__ unsigned long long warpS[32], warpT[32];
  __shared__ unsigned long long carryS, carryT;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (threadIdx.x == 0) carryS = carryT = 0;
  __syncthreads();
  for (size_t base = 0; base < tiles; base += blockDim.x) {
    const size_t i = base + threadIdx.x;
    const unsigned long long s = i < tiles ? strict[i] : 0, t = kTies && i < tiles ? ties[i] : 0;
    unsigned long long is = s, it = t;  // inclusive within the warp
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned long long us = __shfl_up_sync(kFull, is, d), ut = __shfl_up_sync(kFull, it, d);
      if (lane >= d) is += us, it += ut;
    }
    if (lane == 31) warpS[warp] = is, warpT[warp] = it;
    __syncthreads();
    if (warp == 0) {  // inclusive over the warps' totals
      unsigned long long ws = lane < warps ? warpS[lane] : 0, wt = lane < warps ? warpT[lane] : 0;
      for (int d = 1; d < 32; d <<= 1) {
        const unsigned long long us = __shfl_up_sync(kFull, ws, d), ut = __shfl_up_sync(kFull, wt, d);
        if (lane >= d) ws += us, wt += ut;
      }
      warpS[lane] = ws, warpT[lane] = wt;
    }
    __syncthreads();
    if (i < tiles) {
      strict[i] = uint32_t(carryS + (warp ? warpS[warp - 1] : 0) + is - s);
      if (kTies) ties[i] = uint32_t(carryT + (warp ? warpT[warp - 1] : 0) + it - t);
    }
    __syncthreads();
    if (threadIdx.x == 0) carryS += warpS[warps - 1], carryT += warpT[warps - 1];
    __syncthreads();
  }
  if (threadIdx.x == 0) st->total = kTies ? carryS + min(carryT, st->rank) : carryS;
}

// Writes every element with key > T, and with kTies the first st->rank elements with key == T, in index order.
template <bool kTies>
__global__ void tileGatherKernel(const float* x, size_t n, const SelectState* st, const uint32_t* strictOffsets,
                                 const uint32_t* tieOffsets, uint32_t* indices, float* values) {
  __shared__ unsigned sums[kWarps];
  TileMasks m;
  unsigned strict, ties;
  loadTile<kTies>(x, n, st->key, m, strict, ties);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t below = (1u << lane) - 1u;
  unsigned long long at = strictOffsets[blockIdx.x];
  if (kTies) {
    // A tie is kept while its rank among all ties (in index order) is below the number wanted.
    const unsigned long long need = st->rank, tiesBefore = tieOffsets[blockIdx.x];
    unsigned long long rank = tiesBefore + warpsBefore(ties, sums);
    unsigned kept = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const bool mine = (m.ties[j] >> lane) & 1u;
      const bool keep = mine && rank + __popc(m.ties[j] & below) < need;
      rank += __popc(m.ties[j]);
      m.strict[j] |= __ballot_sync(kFull, keep);  // from here on: everything this tile writes
      kept += __popc(m.strict[j]);
    }
    at += min(tiesBefore, need);
    strict = kept;
  }
  at += warpsBefore(strict, sums);
  const size_t base = size_t(blockIdx.x) * kTile + size_t(warp) * kItems * 32;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if ((m.strict[j] >> lane) & 1u) {
      const unsigned long long o = at + __popc(m.strict[j] & below);
      indices[o] = uint32_t(base + size_t(j) * 32 + lane);
      values[o] = m.value[j];
    }
    at += __popc(m.strict[j]);
  }
}

// Histogram of `width` magnitude bits from `shift` among the elements whose higher bits equal the select's key so
// far. Lanes of a warp that fall in the same bucket add once (the first passes see few distinct buckets).
__global__ void radixHistogramKernel(const float* x, size_t n, int shift, int width, const SelectState* st,
                                     unsigned* histogram) {
  __shared__ unsigned local[2048];
  for (int b = threadIdx.x; b < (1 << width); b += blockDim.x) local[b] = 0;
  __syncthreads();
  const uint32_t prefix = st->key, mask = st->mask;
  const int lane = threadIdx.x & 31;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t base = blockIdx.x * size_t(blockDim.x); base < n; base += stride) {  // the same trips for a warp
    const size_t i = base + threadIdx.x;
    const uint32_t m = i < n ? magnitudeKey(x[i]) : 0xffffffffu;  // never matches: keys stay below 2^31
    const bool match = (m & mask) == prefix && i < n;
    // After the first pass few elements still match the prefix: a warp with none skips the match and the adds.
    if (!__any_sync(kFull, match)) continue;
    const unsigned bucket = match ? (m >> shift) & ((1u << width) - 1) : 0xffffffffu;
    const unsigned peers = __match_any_sync(kFull, bucket);
    if (match && lane == __ffs(peers) - 1) atomicAdd(&local[bucket], unsigned(__popc(peers)));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < (1 << width); b += blockDim.x)
    if (local[b]) atomicAdd(&histogram[b], local[b]);
}

// One warp: finds the bucket holding the rank-th largest, narrows the select to it, and clears the histogram for
// the next pass. Lane l owns buckets [l * per, (l + 1) * per).
__global__ void radixPickKernel(unsigned* histogram, int shift, int width, SelectState* st) {
  const int lane = threadIdx.x, per = (1 << width) / 32, lo = lane * per;
  unsigned long long mine = 0;
  for (int b = lo; b < lo + per; ++b) mine += histogram[b];
  unsigned long long above = mine;  // how many fall in this lane's buckets or higher ones
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned long long u = __shfl_down_sync(kFull, above, d);
    if (lane + d < 32) above += u;
  }
  unsigned long long higher = __shfl_down_sync(kFull, above, 1);
  if (lane == 31) higher = 0;
  const unsigned long long rank = st->rank;
  __syncwarp();
  if (above >= rank && higher < rank) {
    unsigned long long r = rank - higher;
    int b = lo + per - 1;
    for (; b > lo && r > histogram[b]; --b) r -= histogram[b];
    st->key |= uint32_t(b) << shift;
    st->mask |= ((1u << width) - 1u) << shift;
    st->rank = r;
  }
  for (int b = lo; b < lo + per; ++b) histogram[b] = 0;
}

__global__ void iotaKernel(const float* x, size_t n, uint32_t* indices, float* values) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) indices[i] = uint32_t(i), values[i] = x[i];
}

}  // namespace

namespace {

struct Workspace {
  int device;
  SelectState* state;
  unsigned* histogram;  // 2048
  unsigned long long* counter;
  uint32_t* strict;  // per tile
  uint32_t* ties;    // per tile
};

Workspace workspace(size_t tiles) {
  thread_local Scratch scratch;
  const size_t fixed = 256 + 2048 * 4 + 64;
  auto* base = static_cast<char*>(scratch.get(fixed + 2 * 4 * std::max<size_t>(tiles, 1)));
  Workspace w;
  w.device = scratch.device();
  w.state = reinterpret_cast<SelectState*>(base);
  w.counter = reinterpret_cast<unsigned long long*>(base + 128);
  w.histogram = reinterpret_cast<unsigned*>(base + 256);
  w.strict = reinterpret_cast<uint32_t*>(base + fixed);
  w.ties = w.strict + std::max<size_t>(tiles, 1);
  return w;
}

size_t tilesFor(size_t n) {
  return (n + kTile - 1) / kTile;
}

size_t countAboveKey(const float* x, size_t n, uint32_t T) {
  if (n == 0) return 0;
  const Workspace w = workspace(0);
  check(cudaMemsetAsync(w.counter, 0, sizeof(unsigned long long), stream()), "memset");
  countKernel<<<std::min(blocksFor(n), 4096), kThreads, 0, stream()>>>(x, n, T, w.counter);
  check(cudaGetLastError(), "count");
  unsigned long long h = 0;
  copyToHost(&h, w.counter, sizeof h, "count");
  return size_t(h);
}

// The ordered compaction of key > T (kTies: plus the first w.state->rank ties of key == T), T in w.state->key.
template <bool kTies>
void compact(const float* x, size_t n, const Workspace& w, size_t tiles, uint32_t* indices, float* values) {
  tileCountKernel<kTies><<<unsigned(tiles), kThreads, 0, stream()>>>(x, n, w.state, w.strict, w.ties);
  check(cudaGetLastError(), "tile count");
  scanTilesKernel<kTies><<<1, kScanThreads, 0, stream()>>>(w.strict, w.ties, tiles, w.state);
  check(cudaGetLastError(), "tile scan");
  tileGatherKernel<kTies><<<unsigned(tiles), kThreads, 0, stream()>>>(x, n, w.state, w.strict, w.ties, indices, values);
  check(cudaGetLastError(), "gather");
}

// `readCount` false: the caller knows the count (a search's), so nothing is read back and 0 is returned.
size_t gatherAboveKey(const float* x, size_t n, uint32_t T, uint32_t* indices, float* values, bool readCount = true) {
  const size_t tiles = tilesFor(n);
  if (tiles == 0) return 0;
  const Workspace w = workspace(tiles);
  initSelectKernel<<<1, 1, 0, stream()>>>(w.state, T, 0);
  compact<false>(x, n, w, tiles, indices, values);
  if (!readCount) return 0;
  unsigned long long total = 0;
  copyToHost(&total, &w.state->total, sizeof total, "gather");
  return size_t(total);
}

// Radix select on the magnitude keys, three passes (bits 30..20, 19..9, 8..0), all on the device: afterwards
// w.state->key is the k-th largest key and w.state->rank how many elements equal to it are among the k largest.
void selectKth(const float* x, size_t n, size_t k, const Workspace& w) {
  initSelectKernel<<<1, 1, 0, stream()>>>(w.state, 0, k);
  check(cudaMemsetAsync(w.histogram, 0, sizeof(unsigned) * 2048, stream()), "memset");
  const int shifts[3] = {20, 9, 0}, widths[3] = {11, 11, 9};
  // As many histogram blocks as the device holds at once (fewer partial histograms to merge), asked once per device.
  thread_local int residentFor = -1, resident = 1;
  if (residentFor != w.device) {
    int sms = 0, perSm = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, w.device), "device");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, radixHistogramKernel, kThreads, 0), "occupancy");
    resident = std::max(1, sms * std::max(perSm, 1)), residentFor = w.device;
  }
  const int grid = std::min(blocksFor(n), resident);
  for (int pass = 0; pass < 3; ++pass) {
    radixHistogramKernel<<<grid, kThreads, 0, stream()>>>(x, n, shifts[pass], widths[pass], w.state, w.histogram);
    check(cudaGetLastError(), "histogram");
    radixPickKernel<<<1, 32, 0, stream()>>>(w.histogram, shifts[pass], widths[pass], w.state);
    check(cudaGetLastError(), "pick");
  }
}

}  // namespace

size_t countAbove(const float* x, size_t n, float t) {
  uint32_t T;
  if (!thresholdKey(t, &T, "countAbove")) return n;
  return countAboveKey(x, n, T);
}

namespace {

size_t gatherAboveImpl(const float* x, size_t n, float t, uint32_t* indices, float* values, bool readCount) {
  uint32_t T;
  if (!thresholdKey(t, &T, "gatherAbove")) {  // a negative threshold keeps everything
    if (n) iotaKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, n, indices, values);
    check(cudaGetLastError(), "gather all");
    return n;
  }
  return gatherAboveKey(x, n, T, indices, values, readCount);
}

}  // namespace

size_t gatherAbove(const float* x, size_t n, float t, uint32_t* indices, float* values) {
  return gatherAboveImpl(x, n, t, indices, values, true);
}

void gatherAboveCounted(const float* x, size_t n, float t, uint32_t* indices, float* values) {
  gatherAboveImpl(x, n, t, indices, values, false);
}

float kthLargestAbs(const float* x, size_t n, size_t k) {
  if (n == 0 || k == 0) return 0.f;
  const Workspace w = workspace(0);
  selectKth(x, n, std::min(k, n), w);
  uint32_t key = 0;
  copyToHost(&key, &w.state->key, sizeof key, "k-th key");
  float v;
  std::memcpy(&v, &key, 4);
  return v;  // the NaN key is the quiet NaN, as on the CPU
}

size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values) {
  k = std::min(k, n);
  if (k == 0) return 0;
  const size_t tiles = tilesFor(n);
  const Workspace w = workspace(tiles);
  selectKth(x, n, k, w);
  compact<true>(x, n, w, tiles, indices, values);  // writes exactly k: no need to read the count back
  return k;
}

}  // namespace ps::kernels::cuda
