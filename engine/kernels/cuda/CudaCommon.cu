// What the CUDA kernel files share (CudaCommon.cuh), and whether a GPU is usable (CudaKernels.h).
#include "engine/kernels/cuda/CudaCommon.cuh"
#include "engine/kernels/cuda/CudaKernels.h"

#include <algorithm>

namespace ps::kernels::cuda {

bool available(std::string* why) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

DeviceScope::DeviceScope(int device) {
  check(cudaGetDevice(&previous_), "current device");
  if (device != previous_) check(cudaSetDevice(device), "set device");
}

DeviceScope::~DeviceScope() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

namespace {
thread_local cudaStream_t tStream = nullptr;
}  // namespace

cudaStream_t stream() {
  return tStream;
}

StreamScope::StreamScope(void* stream) : previous_(tStream) {
  tStream = static_cast<cudaStream_t>(stream);
}

StreamScope::~StreamScope() {
  tStream = static_cast<cudaStream_t>(previous_);
}

Scratch::~Scratch() {
  if (p_) cudaFree(p_);  // at thread exit; after the runtime's own shutdown this fails harmlessly
}

void* Scratch::get(size_t bytes) {
  int device = 0;
  check(cudaGetDevice(&device), "current device");
  if (p_ && (bytes > size_ || device != owner_)) {
    cudaFree(p_);
    p_ = nullptr;
  }
  if (!p_) {
    size_ = std::max<size_t>(bytes, size_t(1) << 16);
    check(cudaMalloc(&p_, size_), "scratch");
    owner_ = device;
  } else if (used_ != stream()) {
    check(cudaStreamSynchronize(used_), "scratch");  // the old stream may still be reading or writing it
  }
  used_ = stream();
  return p_;
}

}  // namespace ps::kernels::cuda
