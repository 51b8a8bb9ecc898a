#include "engine/kernels/cuda/CudaKernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace ps::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 1024;  // elements per block in the ordered compaction

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}

int blocksFor(size_t n) { return int((n + kThreads - 1) / kThreads); }

__device__ __forceinline__ uint32_t magnitudeBits(float v) { return __float_as_uint(v) & 0x7fffffffu; }

__global__ void countKernel(const float* x, size_t n, float t, unsigned long long* count) {
  unsigned local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += fabsf(x[i]) > t;
  atomicAdd(count, (unsigned long long)local);
}

// Per tile: how many survive (pass 1), then where each writes (pass 2), keeping index order.
__global__ void tileCountKernel(const float* x, size_t n, float t, uint32_t* tileCounts) {
  const size_t base = size_t(blockIdx.x) * kTile;
  unsigned local = 0;
  for (int j = threadIdx.x; j < kTile; j += blockDim.x) {
    const size_t i = base + j;
    local += i < n && fabsf(x[i]) > t;
  }
  atomicAdd(&tileCounts[blockIdx.x], local);
}

__global__ void tileGatherKernel(const float* x, size_t n, float t, const uint32_t* tileOffsets, uint32_t* indices,
                                 float* values) {
  __shared__ uint32_t warpSums[kThreads / 32];
  __shared__ uint32_t running;
  if (threadIdx.x == 0) running = tileOffsets[blockIdx.x];
  __syncthreads();
  const size_t base = size_t(blockIdx.x) * kTile;
  for (int chunk = 0; chunk < kTile; chunk += blockDim.x) {
    const size_t i = base + chunk + threadIdx.x;
    const bool keep = i < n && fabsf(x[i]) > t;
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warpSums[warp] = __popc(mask);
    __syncthreads();
    uint32_t before = running;
    for (int w = 0; w < warp; ++w) before += warpSums[w];
    if (keep) {
      const uint32_t at = before + __popc(mask & ((1u << lane) - 1u));
      indices[at] = uint32_t(i);
      values[at] = x[i];
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (int w = 0; w < int(blockDim.x / 32); ++w) running += warpSums[w];
    __syncthreads();
  }
}

// Histogram of 11 (then 11, then 10) magnitude bits among elements whose higher bits equal `prefix`.
__global__ void radixHistogramKernel(const float* x, size_t n, int shift, int width, uint32_t prefixMask,
                                     uint32_t prefix, unsigned* histogram) {
  __shared__ unsigned local[2048];
  for (int b = threadIdx.x; b < (1 << width); b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t m = magnitudeBits(x[i]);
    if ((m & prefixMask) == prefix) atomicAdd(&local[(m >> shift) & ((1u << width) - 1)], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < (1 << width); b += blockDim.x)
    if (local[b]) atomicAdd(&histogram[b], local[b]);
}

__global__ void groupMaxAbsKernel(const float* x, size_t n, size_t group, float* scales) {
  __shared__ float best[kThreads];
  const size_t g = blockIdx.x, lo = g * group, hi = min(n, lo + group);
  __shared__ int sawNan;
  if (threadIdx.x == 0) sawNan = 0;
  __syncthreads();
  float m = 0.f;
  bool nan = false;
  for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const float a = fabsf(x[i]);
    m = fmaxf(m, a);  // fmaxf skips NaN; the CPU kernel reports a group holding one as NaN, so track it apart
    nan |= isnan(a);
  }
  best[threadIdx.x] = m;
  if (nan) sawNan = 1;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) scales[g] = sawNan ? __int_as_float(0x7fc00000) : best[0];
}

// The CPU kernel's arithmetic, operation for operation (Quantize.cpp), so both produce the same codes:
// v = x * inv + offset, code = clamp(floor(v), 0, 2^b - 1), with inv = unit / s computed in double. The multiply
// and the add are rounded apart (__fmul_rn / __fadd_rn): nvcc would otherwise fuse them into one FMA, which rounds
// once and moves values that sit on a rounding boundary to the neighbouring code. The x86 build never fuses (no FMA
// in its target), and sender and receiver must agree bit for bit.
__device__ __forceinline__ unsigned codeOf(float x, float s, int bits) {
  const double unit = bits == 1 ? 1.0 : double(1 << (bits - 1));
  const float inv = (s == 0.f || isnan(s)) ? 0.f : float(fmin(fmax(unit / double(s), -3.4028234663852886e38),
                                                                3.4028234663852886e38));
  const float offset = (bits == 1 ? 0.5f : float(1 << (bits - 1))) + 0.5f;  // nearest rounding adds 0.5
  float v = __fadd_rn(__fmul_rn(x, inv), offset);
  v = v > 0.f ? v : 0.f;
  const float top = float((1 << bits) - 1);
  v = v < top ? v : top;
  return unsigned(int(v));
}

// One thread per output byte: gathers the codes whose bits land in it (LSB-first), so no atomics are needed.
__global__ void packKernel(const float* x, size_t n, int bits, size_t group, const float* scales, uint8_t* out,
                           size_t bytes) {
  const size_t byte = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (byte >= bytes) return;
  unsigned value = 0;
  for (int bit = 0; bit < 8; ++bit) {
    const size_t global = byte * 8 + bit, i = global / bits;
    if (i >= n) break;
    const unsigned code = codeOf(x[i], scales[i / group], bits);
    value |= ((code >> (global % bits)) & 1u) << bit;
  }
  out[byte] = uint8_t(value);
}

__global__ void unpackKernel(const uint8_t* in, size_t n, int bits, size_t group, const float* scales, float* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  unsigned code = 0;
  for (int b = 0; b < bits; ++b) {
    const size_t global = i * bits + b;
    code |= unsigned((in[global >> 3] >> (global & 7)) & 1u) << b;
  }
  // x̂ = float(q) * step + 0 as on the CPU (the + 0 turns a -0 into +0 there too), unfused.
  const float s = scales[i / group];
  if (bits == 1) {
    out[i] = __fadd_rn(__fmul_rn(float(int(code) * 2 - 1), __fmul_rn(s, 0.5f)), 0.f);
  } else {
    const int h = 1 << (bits - 1);
    out[i] = __fadd_rn(__fmul_rn(float(int(code) - h), float(double(s) / double(h))), 0.f);
  }
}

}  // namespace

bool available(std::string* why) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

size_t countAbove(const float* x, size_t n, float t) {
  unsigned long long* d = nullptr;
  check(cudaMalloc(&d, sizeof *d), "malloc");
  check(cudaMemset(d, 0, sizeof *d), "memset");
  countKernel<<<std::min(blocksFor(n), 4096), kThreads>>>(x, n, t, d);
  unsigned long long h = 0;
  check(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), "count");
  cudaFree(d);
  return size_t(h);
}

size_t gatherAbove(const float* x, size_t n, float t, uint32_t* indices, float* values) {
  const int tiles = int((n + kTile - 1) / kTile);
  if (tiles == 0) return 0;
  uint32_t* counts = nullptr;
  check(cudaMalloc(&counts, sizeof(uint32_t) * tiles), "malloc");
  check(cudaMemset(counts, 0, sizeof(uint32_t) * tiles), "memset");
  tileCountKernel<<<tiles, kThreads>>>(x, n, t, counts);
  std::vector<uint32_t> offsets(static_cast<size_t>(tiles));
  check(cudaMemcpy(offsets.data(), counts, sizeof(uint32_t) * tiles, cudaMemcpyDeviceToHost), "tile counts");
  uint32_t total = 0;
  for (auto& c : offsets) {
    const uint32_t here = c;
    c = total;
    total += here;
  }
  check(cudaMemcpy(counts, offsets.data(), sizeof(uint32_t) * tiles, cudaMemcpyHostToDevice), "tile offsets");
  tileGatherKernel<<<tiles, kThreads>>>(x, n, t, counts, indices, values);
  check(cudaGetLastError(), "gather");
  cudaFree(counts);
  return total;
}

float kthLargestAbs(const float* x, size_t n, size_t k) {
  if (n == 0 || k == 0) return 0.f;
  k = std::min(k, n);
  unsigned* histogram = nullptr;
  check(cudaMalloc(&histogram, sizeof(unsigned) * 2048), "malloc");
  uint32_t prefix = 0, mask = 0;
  size_t rank = k;  // the rank-th largest among elements matching the prefix
  const int shifts[3] = {20, 9, 0}, widths[3] = {11, 11, 9};
  for (int pass = 0; pass < 3; ++pass) {
    check(cudaMemset(histogram, 0, sizeof(unsigned) * 2048), "memset");
    radixHistogramKernel<<<std::min(blocksFor(n), 1024), kThreads>>>(x, n, shifts[pass], widths[pass], mask, prefix,
                                                                       histogram);
    std::vector<unsigned> h(size_t(1) << widths[pass]);
    check(cudaMemcpy(h.data(), histogram, sizeof(unsigned) * h.size(), cudaMemcpyDeviceToHost), "histogram");
    int bucket = int(h.size()) - 1;
    for (; bucket > 0 && rank > h[size_t(bucket)]; --bucket) rank -= h[size_t(bucket)];
    prefix |= uint32_t(bucket) << shifts[pass];
    mask |= ((1u << widths[pass]) - 1u) << shifts[pass];
  }
  cudaFree(histogram);
  float v;
  std::memcpy(&v, &prefix, 4);
  return v;
}

size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values) {
  k = std::min(k, n);
  if (k == 0) return 0;
  const float t = kthLargestAbs(x, n, k);
  // Strictly above the threshold first, then the lowest-indexed ties: both ascending, then merged on the host.
  const size_t above = gatherAbove(x, n, t, indices, values);
  if (above == k) return k;
  // Ties: |x| == t, the lowest indices. Gather |x| >= t into scratch and keep every strict survivor plus the
  // first k - above ties, in index order.
  uint32_t* idx = nullptr;
  float* val = nullptr;
  check(cudaMalloc(&idx, sizeof(uint32_t) * n), "malloc");
  check(cudaMalloc(&val, sizeof(float) * n), "malloc");
  const size_t atLeast = gatherAbove(x, n, std::nextafter(t, -1.f), idx, val);
  std::vector<uint32_t> hi(atLeast);
  std::vector<float> hv(atLeast);
  check(cudaMemcpy(hi.data(), idx, sizeof(uint32_t) * atLeast, cudaMemcpyDeviceToHost), "ties");
  check(cudaMemcpy(hv.data(), val, sizeof(float) * atLeast, cudaMemcpyDeviceToHost), "ties");
  std::vector<uint32_t> oi;
  std::vector<float> ov;
  size_t ties = k - above;
  for (size_t j = 0; j < atLeast && oi.size() < k; ++j) {
    const bool tie = std::fabs(hv[j]) <= t;
    if (tie && ties == 0) continue;
    if (tie) --ties;
    oi.push_back(hi[j]);
    ov.push_back(hv[j]);
  }
  check(cudaMemcpy(indices, oi.data(), sizeof(uint32_t) * oi.size(), cudaMemcpyHostToDevice), "topk");
  check(cudaMemcpy(values, ov.data(), sizeof(float) * ov.size(), cudaMemcpyHostToDevice), "topk");
  cudaFree(idx);
  cudaFree(val);
  return oi.size();
}

void groupMaxAbs(const float* x, size_t n, size_t group, float* scales) {
  const size_t groups = (n + group - 1) / group;
  if (groups) groupMaxAbsKernel<<<unsigned(groups), kThreads>>>(x, n, group, scales);
  check(cudaGetLastError(), "group max-abs");
}

void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, uint8_t* out) {
  const size_t bytes = (n * size_t(bits) + 7) / 8;
  if (bytes) packKernel<<<blocksFor(bytes), kThreads>>>(x, n, bits, group, scales, out, bytes);
  check(cudaGetLastError(), "quantize");
}

void unpackDequantizeSymmetric(const uint8_t* in, size_t n, int bits, size_t group, const float* scales, float* out) {
  if (n) unpackKernel<<<blocksFor(n), kThreads>>>(in, n, bits, group, scales, out);
  check(cudaGetLastError(), "dequantize");
}

}  // namespace ps::kernels::cuda
