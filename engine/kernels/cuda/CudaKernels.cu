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

// Device memory owned for the length of a call: freed on every way out, exceptions included.
template <typename T>
struct DeviceArray {
  explicit DeviceArray(size_t n) { check(cudaMalloc(&p, sizeof(T) * (n ? n : 1)), "malloc"); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* p = nullptr;
};

// The order the CPU kernels select by (TopK.h): the bits of |v|, every NaN mapped to the quiet NaN 0x7fc00000, so
// NaN is above +inf and all NaNs are equal.
constexpr uint32_t kNanKey = 0x7fc00000u, kInfKey = 0x7f800000u;
__host__ __device__ __forceinline__ uint32_t keyOfBits(uint32_t bits) {
  const uint32_t m = bits & 0x7fffffffu;
  return m > kInfKey ? kNanKey : m;
}
__device__ __forceinline__ uint32_t magnitudeKey(float v) { return keyOfBits(__float_as_uint(v)); }
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

__global__ void countKernel(const float* x, size_t n, uint32_t T, unsigned long long* count) {
  unsigned local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += magnitudeKey(x[i]) > T;
  atomicAdd(count, (unsigned long long)local);
}

// Per tile: how many survive (pass 1), then where each writes (pass 2), keeping index order.
__global__ void tileCountKernel(const float* x, size_t n, uint32_t T, uint32_t* tileCounts) {
  const size_t base = size_t(blockIdx.x) * kTile;
  unsigned local = 0;
  for (int j = threadIdx.x; j < kTile; j += blockDim.x) {
    const size_t i = base + j;
    local += i < n && magnitudeKey(x[i]) > T;
  }
  atomicAdd(&tileCounts[blockIdx.x], local);
}

__global__ void tileGatherKernel(const float* x, size_t n, uint32_t T, const uint32_t* tileOffsets, uint32_t* indices,
                                 float* values) {
  __shared__ uint32_t warpSums[kThreads / 32];
  __shared__ uint32_t running;
  if (threadIdx.x == 0) running = tileOffsets[blockIdx.x];
  __syncthreads();
  const size_t base = size_t(blockIdx.x) * kTile;
  for (int chunk = 0; chunk < kTile; chunk += blockDim.x) {
    const size_t i = base + chunk + threadIdx.x;
    const bool keep = i < n && magnitudeKey(x[i]) > T;
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
    const uint32_t m = magnitudeKey(x[i]);
    if ((m & prefixMask) == prefix) atomicAdd(&local[(m >> shift) & ((1u << width) - 1)], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < (1 << width); b += blockDim.x)
    if (local[b]) atomicAdd(&histogram[b], local[b]);
}

__global__ void groupMaxAbsKernel(const float* x, size_t n, size_t group, size_t groups, float* scales) {
  __shared__ float best[kThreads];
  __shared__ int sawNan;
  for (size_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const size_t lo = g * group, hi = min(n, lo + group);
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
    __syncthreads();  // best and sawNan are reused by the next group
  }
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

namespace {

size_t countAboveKey(const float* x, size_t n, uint32_t T) {
  if (n == 0) return 0;
  DeviceArray<unsigned long long> d(1);
  check(cudaMemset(d.p, 0, sizeof(unsigned long long)), "memset");
  countKernel<<<std::min(blocksFor(n), 4096), kThreads>>>(x, n, T, d.p);
  check(cudaGetLastError(), "count");
  unsigned long long h = 0;
  check(cudaMemcpy(&h, d.p, sizeof h, cudaMemcpyDeviceToHost), "count");
  return size_t(h);
}

size_t gatherAboveKey(const float* x, size_t n, uint32_t T, uint32_t* indices, float* values) {
  const size_t tiles = (n + kTile - 1) / kTile;
  if (tiles == 0) return 0;
  DeviceArray<uint32_t> counts(tiles);
  check(cudaMemset(counts.p, 0, sizeof(uint32_t) * tiles), "memset");
  tileCountKernel<<<unsigned(tiles), kThreads>>>(x, n, T, counts.p);
  check(cudaGetLastError(), "tile count");
  std::vector<uint32_t> offsets(tiles);
  check(cudaMemcpy(offsets.data(), counts.p, sizeof(uint32_t) * tiles, cudaMemcpyDeviceToHost), "tile counts");
  uint32_t total = 0;
  for (auto& c : offsets) {
    const uint32_t here = c;
    c = total;
    total += here;
  }
  check(cudaMemcpy(counts.p, offsets.data(), sizeof(uint32_t) * tiles, cudaMemcpyHostToDevice), "tile offsets");
  tileGatherKernel<<<unsigned(tiles), kThreads>>>(x, n, T, counts.p, indices, values);
  check(cudaGetLastError(), "gather");
  check(cudaDeviceSynchronize(), "gather");
  return total;
}

__global__ void iotaKernel(const float* x, size_t n, uint32_t* indices, float* values) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) indices[i] = uint32_t(i), values[i] = x[i];
}

uint32_t kthLargestKey(const float* x, size_t n, size_t k) {
  DeviceArray<unsigned> histogram(2048);
  uint32_t prefix = 0, mask = 0;
  size_t rank = k;  // the rank-th largest among elements matching the prefix
  const int shifts[3] = {20, 9, 0}, widths[3] = {11, 11, 9};
  for (int pass = 0; pass < 3; ++pass) {
    check(cudaMemset(histogram.p, 0, sizeof(unsigned) * 2048), "memset");
    radixHistogramKernel<<<std::min(blocksFor(n), 1024), kThreads>>>(x, n, shifts[pass], widths[pass], mask, prefix,
                                                                       histogram.p);
    check(cudaGetLastError(), "histogram");
    std::vector<unsigned> h(size_t(1) << widths[pass]);
    check(cudaMemcpy(h.data(), histogram.p, sizeof(unsigned) * h.size(), cudaMemcpyDeviceToHost), "histogram");
    int bucket = int(h.size()) - 1;
    for (; bucket > 0 && rank > h[size_t(bucket)]; --bucket) rank -= h[size_t(bucket)];
    prefix |= uint32_t(bucket) << shifts[pass];
    mask |= ((1u << widths[pass]) - 1u) << shifts[pass];
  }
  return prefix;
}

}  // namespace

size_t countAbove(const float* x, size_t n, float t) {
  uint32_t T;
  if (!thresholdKey(t, &T, "countAbove")) return n;
  return countAboveKey(x, n, T);
}

size_t gatherAbove(const float* x, size_t n, float t, uint32_t* indices, float* values) {
  uint32_t T;
  if (!thresholdKey(t, &T, "gatherAbove")) {  // a negative threshold keeps everything
    if (n) iotaKernel<<<blocksFor(n), kThreads>>>(x, n, indices, values);
    check(cudaGetLastError(), "gather all");
    return n;
  }
  return gatherAboveKey(x, n, T, indices, values);
}

float kthLargestAbs(const float* x, size_t n, size_t k) {
  if (n == 0 || k == 0) return 0.f;
  const uint32_t key = kthLargestKey(x, n, std::min(k, n));
  float v;
  std::memcpy(&v, &key, 4);
  return v;  // the NaN key is the quiet NaN, as on the CPU
}

size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values) {
  k = std::min(k, n);
  if (k == 0) return 0;
  const uint32_t T = kthLargestKey(x, n, k);
  // Strictly above the k-th key first, then the lowest-indexed ties: both ascending, then merged on the host.
  const size_t above = gatherAboveKey(x, n, T, indices, values);
  if (above == k) return k;
  // Ties: key == T, the lowest indices. Gather key >= T into scratch and keep every strict survivor plus the first
  // k - above ties, in index order (T >= 1 here: with T == 0 every element is >= T and `above` counted the rest).
  DeviceArray<uint32_t> idx(n);
  DeviceArray<float> val(n);
  const size_t atLeast = T == 0 ? (gatherAbove(x, n, -1.f, idx.p, val.p), n) : gatherAboveKey(x, n, T - 1, idx.p, val.p);
  std::vector<uint32_t> hi(atLeast);
  std::vector<float> hv(atLeast);
  check(cudaMemcpy(hi.data(), idx.p, sizeof(uint32_t) * atLeast, cudaMemcpyDeviceToHost), "ties");
  check(cudaMemcpy(hv.data(), val.p, sizeof(float) * atLeast, cudaMemcpyDeviceToHost), "ties");
  std::vector<uint32_t> oi;
  std::vector<float> ov;
  size_t ties = k - above;
  for (size_t j = 0; j < atLeast && oi.size() < k; ++j) {
    const bool tie = hostKey(hv[j]) == T;
    if (tie && ties == 0) continue;
    if (tie) --ties;
    oi.push_back(hi[j]);
    ov.push_back(hv[j]);
  }
  check(cudaMemcpy(indices, oi.data(), sizeof(uint32_t) * oi.size(), cudaMemcpyHostToDevice), "topk");
  check(cudaMemcpy(values, ov.data(), sizeof(float) * ov.size(), cudaMemcpyHostToDevice), "topk");
  return oi.size();
}

namespace {
void checkQuantizeArgs(int bits, size_t group, const char* who) {
  if (bits < 1 || bits > 8) throw std::invalid_argument(std::string(who) + ": bits must be in 1..8");
  if (group == 0) throw std::invalid_argument(std::string(who) + ": group must be >= 1");
}
}  // namespace

void groupMaxAbs(const float* x, size_t n, size_t group, float* scales) {
  if (group == 0) throw std::invalid_argument("groupMaxAbs: group must be >= 1");
  const size_t groups = (n + group - 1) / group;
  if (groups) groupMaxAbsKernel<<<unsigned(std::min<size_t>(groups, 1u << 20)), kThreads>>>(x, n, group, groups, scales);
  check(cudaGetLastError(), "group max-abs");
}

void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, uint8_t* out) {
  checkQuantizeArgs(bits, group, "quantizePackSymmetric");
  const size_t bytes = (n * size_t(bits) + 7) / 8;
  if (bytes) packKernel<<<blocksFor(bytes), kThreads>>>(x, n, bits, group, scales, out, bytes);
  check(cudaGetLastError(), "quantize");
}

void unpackDequantizeSymmetric(const uint8_t* in, size_t n, int bits, size_t group, const float* scales, float* out) {
  checkQuantizeArgs(bits, group, "unpackDequantizeSymmetric");
  if (n) unpackKernel<<<blocksFor(n), kThreads>>>(in, n, bits, group, scales, out);
  check(cudaGetLastError(), "dequantize");
}

}  // namespace ps::kernels::cuda
