#pragma once
// What the CUDA kernel files share: the block size, error checks, grid sizes and per-thread scratch memory. Internal
// to engine/kernels/cuda.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ps::kernels::cuda {

constexpr int kThreads = 256;

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
}

inline int blocksFor(size_t n) {
  return int((n + kThreads - 1) / kThreads);
}

// Scratch device memory, one block per host thread, grown as needed and kept: a cudaMalloc and a cudaFree per call
// cost more than the kernels at a million elements (cudaFree waits for the whole device). Work is queued on the
// default stream, so a call's scratch is never reused before the previous call's kernels are done with it.
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
};

}  // namespace ps::kernels::cuda
