// GaussianK's threshold search on the device (CudaKernels.h, gaussianSearch): small kernels that keep the search's
// state in device memory between the passes, so the host reads it once, at the end.
#include "engine/kernels/GaussianSearch.h"
#include "engine/kernels/cuda/CudaCommon.cuh"
#include "engine/kernels/cuda/CudaKernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ps::kernels::cuda {
namespace {

// GaussianK's search (gaussianSearch below) as it stands on the device between its passes: the threshold and its key,
// whether it keeps everything (t < 0), whether a count landed in the band (the search stopped) and the last count.
struct GaussianState {
  float t;
  uint32_t key;
  int all, done;
  unsigned long long count;
};

__device__ void setGaussianThreshold(GaussianState* st, float t, size_t n) {
  st->t = t;
  st->all = !(t >= 0.f);  // a NaN would keep everything (the CPU refuses one), but the moments are finite: none comes
  st->key = st->all ? 0u : magnitudeKey(t);
  st->count = st->all ? n : 0;  // keeping everything needs no count
}

// Per block: the count, sum and sum of squares of the finite elements' offsets from x[0] (from 0 when x[0] is not
// finite), in double; the block's threads add in a fixed order, so equal inputs give equal moments.
__global__ void momentPartsKernel(const float* x, size_t n, double* parts) {
  const float first = x[0];
  const double shift = isfinite(first) ? double(first) : 0.0;
  double c = 0, a = 0, q = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    if (isfinite(v)) {
      const double d = double(v) - shift;
      c += 1.0, a += d, q += d * d;
    }
  }
  c = warpSum(c), a = warpSum(a), q = warpSum(q);
  __shared__ double sums[3][kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) sums[0][warp] = c, sums[1][warp] = a, sums[2][warp] = q;
  __syncthreads();
  if (threadIdx.x == 0) {
    double bc = 0, ba = 0, bq = 0;
    for (int w = 0; w < kThreads / 32; ++w) bc += sums[0][w], ba += sums[1][w], bq += sums[2][w];
    parts[3 * size_t(blockIdx.x)] = bc, parts[3 * size_t(blockIdx.x) + 1] = ba, parts[3 * size_t(blockIdx.x) + 2] = bq;
  }
}

// One warp: the blocks' parts into the moments (Bessel's correction, as the CPU's), then the first threshold.
__global__ void gaussianStartKernel(const float* x, size_t n, const double* parts, int blocks, double z,
                                    GaussianState* st) {
  const int lane = threadIdx.x;
  double c = 0, a = 0, q = 0;
  for (int b = lane; b < blocks; b += 32) c += parts[3 * b], a += parts[3 * b + 1], q += parts[3 * b + 2];
  c = warpSum(c), a = warpSum(a), q = warpSum(q);
  if (lane != 0) return;
  const float first = x[0];
  const double shift = isfinite(first) ? double(first) : 0.0;
  const double mean = c > 0 ? shift + a / c : 0.0;
  const double var = c > 1 ? fmax(0.0, (q - a * a / c) / (c - 1)) : 0.0;
  st->done = 0;
  setGaussianThreshold(st, firstGaussianThreshold(mean, sqrt(var), z), n);
}

// A selection's count, #{key > the threshold's}, unless the search has stopped or keeps everything.
__global__ void gaussianCountKernel(const float* x, size_t n, GaussianState* st) {
  if (st->done || st->all) return;
  const uint32_t T = st->key;
  unsigned local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += magnitudeKey(x[i]) > T;
  local = warpSum(local);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(&st->count, (unsigned long long)local);
}

// The move after a selection (GaussianSearch.h): stop in the band, else move the threshold for the next count.
__global__ void gaussianMoveKernel(size_t n, unsigned long long k, GaussianState* st) {
  if (st->done) return;
  float t = st->t;
  if (!moveGaussianThreshold(st->count, k, &t)) {
    st->done = 1;
    return;
  }
  setGaussianThreshold(st, t, n);
}

}  // namespace

float gaussianSearch(const float* x, size_t n, double z, size_t k, size_t* count) {
  if (n == 0) throw std::invalid_argument("gaussianSearch: empty input");
  if (!std::isfinite(z)) throw std::invalid_argument("gaussianSearch: the quantile must be finite");
  thread_local Scratch scratch;
  const int blocks = std::min(blocksFor(n), 1024);
  char* base = static_cast<char*>(scratch.get(64 + 3 * sizeof(double) * size_t(blocks)));
  auto* st = reinterpret_cast<GaussianState*>(base);
  auto* parts = reinterpret_cast<double*>(base + 64);
  momentPartsKernel<<<blocks, kThreads, 0, stream()>>>(x, n, parts);
  check(cudaGetLastError(), "moments");
  gaussianStartKernel<<<1, 32, 0, stream()>>>(x, n, parts, blocks, z, st);
  check(cudaGetLastError(), "first threshold");
  const int countBlocks = std::min(blocksFor(n), 4096);
  for (int selection = 0; selection < kGaussianSelections; ++selection) {
    if (selection > 0) {
      gaussianMoveKernel<<<1, 1, 0, stream()>>>(n, k, st);
      check(cudaGetLastError(), "threshold move");
    }
    gaussianCountKernel<<<countBlocks, kThreads, 0, stream()>>>(x, n, st);
    check(cudaGetLastError(), "count");
  }
  GaussianState h{};
  copyToHost(&h, st, sizeof h, "search");
  if (count) *count = size_t(h.count);
  return h.t;
}

}  // namespace ps::kernels::cuda
