#pragma once
// CUDA twins of the CPU kernels (engine/kernels/*.h), on device pointers. Plain CUDA, no torch, so the .cu files
// compile with nvcc alone; callers hand in device memory (for example a tensor's data_ptr on cuda:i).
// Semantics match the CPU versions exactly; tests/engine/kernels/cuda/CudaKernelsTest.cpp compares them on a GPU.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ps::kernels::cuda {

// False with the reason (no driver, no device) where kernels cannot run.
bool available(std::string* why = nullptr);

// Makes `device` the host thread's current device for the scope's life: the kernels below run on the current device,
// and a stage's thread may touch several (its own, and a peer's when it decodes there).
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Queues the kernels below, on this host thread, on `stream` (a cudaStream_t; null: the legacy default stream) for the
// scope's life: the stream of the torch work around them (a stage's own stream), so that they are ordered after what
// made their inputs and before what reads their outputs without waiting for the whole device.
class StreamScope {
 public:
  explicit StreamScope(void* stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  void* previous_;
};

// Magnitudes are ordered as on the CPU (TopK.h): NaN is above +inf and all NaNs are equal. A negative threshold
// keeps everything; a NaN threshold, bits outside 1..8 or group 0 throw std::invalid_argument, a CUDA failure
// std::runtime_error. Work is queued on the thread's stream (StreamScope) of the current device: outputs are ready for
// whatever follows on that stream; a returned count or value is exact when the call returns (it waits for that stream
// alone). Scratch
// memory is kept per host thread between calls (a cudaMalloc per call cost more than the kernels).

// #{ |x| > t }.
size_t countAbove(const float* x, size_t n, float threshold);
// Every i with |x[i]| > t, ascending, into indices/values (device, capacity >= the count); returns the count.
size_t gatherAbove(const float* x, size_t n, float threshold, uint32_t* indices, float* values);
// gatherAbove for a caller that knows the count (capacity >= it): the same writes, without reading the count back.
void gatherAboveCounted(const float* x, size_t n, float threshold, uint32_t* indices, float* values);
// GaussianK's threshold search (Threshold.h, gaussianThreshold; its arithmetic in GaussianSearch.h) all on the device:
// the moments of the finite values (in double, around x[0]), t = mean + z·stddev, then up to three counts with the
// moves between them, and one read at the end. Returns the last selection's threshold (negative: everything is
// kept) and stores its count in *count; gatherAboveCounted with them writes the selection. z = gaussianQuantile(K), k =
// gaussianTarget(n, K). The moments are summed in another order than the CPU's, so t may differ from the CPU's in
// its last bits; given t, the count and the selection are the CPU's.
float gaussianSearch(const float* x, size_t n, double z, size_t k, size_t* count);
// The k-th largest |x| by radix select on the magnitude bits (three histogram passes).
float kthLargestAbs(const float* x, size_t n, size_t k);
// Exact TopK: |x| above the k-th largest, then the lowest-indexed ties; indices ascending. Returns k.
size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values);
// Symmetric max-abs Q_b with nearest rounding, LSB-first packing, scale per group (device arrays).
void groupMaxAbs(const float* x, size_t n, size_t group, float* scales);
void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, uint8_t* out);
void unpackDequantizeSymmetric(const uint8_t* in, size_t n, int bits, size_t group, const float* scales, float* out);

}  // namespace ps::kernels::cuda
