#include "engine/tensors/CudaStreams.h"

// Defined (by engine/CMakeLists.txt, for this file alone) where LibTorch carries its CUDA library.
#ifdef PIPESQUEEZE_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace ps {

#ifdef PIPESQUEEZE_TORCH_CUDA
void* cudaStreamOf(const c10::Stream& stream) {
  return stream.device_type() == c10::DeviceType::CUDA ? c10::cuda::CUDAStream(stream).stream() : nullptr;
}
void* currentCudaStream(int device) {
  return c10::cuda::getCurrentCUDAStream(c10::DeviceIndex(device)).stream();
}
bool namesCudaStreams() {
  return true;
}
#else
void* cudaStreamOf(const c10::Stream&) {
  return nullptr;
}
void* currentCudaStream(int) {
  return nullptr;
}
bool namesCudaStreams() {
  return false;
}
#endif

}  // namespace ps
