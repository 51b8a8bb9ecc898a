// Group max-abs scales and symmetric quantize + pack / unpack + dequantize, bit for bit as on the CPU
// (CudaKernels.h).
#include "engine/kernels/cuda/CudaCommon.cuh"
#include "engine/kernels/cuda/CudaKernels.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ps::kernels::cuda {
namespace {

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
  const float inv =
      (s == 0.f || isnan(s)) ? 0.f : float(fmin(fmax(unit / double(s), -3.4028234663852886e38), 3.4028234663852886e38));
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

namespace {
void checkQuantizeArgs(int bits, size_t group, const char* who) {
  if (bits < 1 || bits > 8) throw std::invalid_argument(std::string(who) + ": bits must be in 1..8");
  if (group == 0) throw std::invalid_argument(std::string(who) + ": group must be >= 1");
}
}  // namespace

void groupMaxAbs(const float* x, size_t n, size_t group, float* scales) {
  if (group == 0) throw std::invalid_argument("groupMaxAbs: group must be >= 1");
  const size_t groups = (n + group - 1) / group;
  if (groups)
    groupMaxAbsKernel<<<unsigned(std::min<size_t>(groups, 1u << 20)), kThreads, 0, stream()>>>(x, n, group, groups,
                                                                                               scales);
  check(cudaGetLastError(), "group max-abs");
}

void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, uint8_t* out) {
  checkQuantizeArgs(bits, group, "quantizePackSymmetric");
  const size_t bytes = (n * size_t(bits) + 7) / 8;
  if (bytes) packKernel<<<blocksFor(bytes), kThreads, 0, stream()>>>(x, n, bits, group, scales, out, bytes);
  check(cudaGetLastError(), "quantize");
}

void unpackDequantizeSymmetric(const uint8_t* in, size_t n, int bits, size_t group, const float* scales, float* out) {
  checkQuantizeArgs(bits, group, "unpackDequantizeSymmetric");
  if (n) unpackKernel<<<blocksFor(n), kThreads, 0, stream()>>>(in, n, bits, group, scales, out);
  check(cudaGetLastError(), "dequantize");
}

}  // namespace ps::kernels::cuda
