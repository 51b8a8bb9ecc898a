#pragma once
// What the CUDA kernel files share: the block size, error checks, grid sizes and per-thread scratch memory. Internal
// to engine/kernels/cuda.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ps::kernels::cuda {

constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;  // every lane of a warp

// The order the CPU kernels select by (TopK.h): the bits of |v|, every NaN mapped to the quiet NaN 0x7fc00000, so
// NaN is above +inf and all NaNs are equal.
constexpr uint32_t kNanKey = 0x7fc00000u, kInfKey = 0x7f800000u;
__host__ __device__ __forceinline__ uint32_t keyOfBits(uint32_t bits) {
  const uint32_t m = bits & 0x7fffffffu;
  return m > kInfKey ? kNanKey : m;
}
__device__ __forceinline__ uint32_t magnitudeKey(float v) {
  return keyOfBits(__float_as_uint(v));
}

// The sum of v over the lanes of a full warp, in lane 0.
template <typename T>
__device__ __forceinline__ T warpSum(T v) {
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(kFull, v, d);
  return v;
}

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}

// The stream this host thread queues kernels on (StreamScope in CudaKernels.h); null is the legacy default stream.
cudaStream_t stream();

// Copies `bytes` from the device to the host after the thread's stream's earlier work, and waits for that stream only.
inline void copyToHost(void* host, const void* device, size_t bytes, const char* what) {
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream()), what);
  check(cudaStreamSynchronize(stream()), what);
}

inline int blocksFor(size_t n) {
  return int((n + kThreads - 1) / kThreads);
}

// Scratch device memory, one block per host thread, grown as needed and kept: a cudaMalloc and a cudaFree per call
// cost more than the kernels at a million elements (cudaFree waits for the whole device). Work is queued on the
// thread's stream, so a call's scratch is never reused before the previous call's kernels are done with it; where the
// thread has moved to another stream, the block waits for the old one first.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();
  // At least `bytes` on the current device (the block moves when the thread's current device changes).
  void* get(size_t bytes);
  int device() const { return owner_; }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
  int owner_ = -1;
  cudaStream_t used_ = nullptr;  // the stream the last call queued its work on
};

}  // namespace ps::kernels::cuda
