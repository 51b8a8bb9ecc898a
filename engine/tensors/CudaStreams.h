#pragma once
// Torch's CUDA streams as the raw handles (cudaStream_t) that code outside torch takes: the CUDA kernels
// (engine/kernels/cuda) and NCCL must queue their work on the stream of the torch work around them, a stage's own.
// Naming a stream needs LibTorch's CUDA library; a build against a LibTorch without CUDA has no CUDA tensors, and
// there every answer is null (the legacy default stream).
#include <c10/core/Stream.h>

namespace ps {

// The cudaStream_t of `stream` (a CUDA stream of torch's); null where this build cannot name it.
void* cudaStreamOf(const c10::Stream& stream);
// The cudaStream_t of torch's current stream on CUDA device `device` for the calling thread.
void* currentCudaStream(int device);
// Whether this build was compiled against a LibTorch with CUDA, and so names its streams.
bool namesCudaStreams();

}  // namespace ps
