#pragma once
// The passes a codec makes over its whole input, run where the input lives: with the CPU kernels on the host, with
// their CUDA twins (engine/kernels/cuda) on a GPU. What comes back to the host is only what the payload needs (the
// selected indices and values, a sample, the group scales, the packed codes), so a codec on a GPU moves its payload
// across PCIe, not its tensor. The twins select and round exactly as the CPU kernels do, so a payload does not depend
// on where it was encoded.
#include "engine/kernels/Threshold.h"

#include <torch/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ps {

class TensorKernels {
 public:
  // True when codecs can work on `x` where it is: always on the CPU; on a CUDA device when this build has the CUDA
  // kernels and the device can run them. Otherwise false with the reason (codecs then copy x to the host).
  static bool usable(const torch::Tensor& x, std::string* why = nullptr);
  // Whether this build compiled the CUDA kernels in.
  static bool built();

  // x: float32, contiguous, on the CPU or a device usable() accepts; held (not copied) for the object's life.
  explicit TensorKernels(const torch::Tensor& x);
  bool onHost() const { return host_ != nullptr; }
  // The host pointer (onHost() only).
  const float* host() const { return host_; }
  size_t size() const { return n_; }

  // Every i with |x[i]| > t ascending into (indices, values), resized to the count; returns it.
  size_t gatherAbove(float t, std::vector<uint32_t>& indices, std::vector<float>& values) const;
  // The k largest magnitudes (lowest-indexed ties), indices ascending, into arrays of room k; returns k.
  size_t topk(size_t k, uint32_t* indices, float* values) const;
  // The same two selections left where x is, for payloads that stay on the device: positions (ascending, uint32 bits
  // in int32, as the kernels write them) and their values (float32) as tensors on x's device (CPU tensors from the
  // CPU kernels on the host).
  struct Picked {
    torch::Tensor positions, values;
    size_t size() const { return size_t(positions.numel()); }
    // The positions as the int64 indices torch wants.
    torch::Tensor indices() const;
  };
  Picked gatherAboveHere(float t) const;
  Picked topkHere(size_t k) const;
  // GaussianK's selection (kernels::gaussianGather) where x is; on a GPU the whole threshold search runs there and
  // the host reads only the final count. *threshold (when not null) gets the threshold the selection used.
  Picked gaussianHere(double K, float* threshold = nullptr) const;
  // x at `positions` (each < size()) into out[0..m).
  void at(const uint32_t* positions, size_t m, float* out) const;
  // Max-abs per group of `group` values into scales (host, one per group).
  void groupMaxAbs(size_t group, float* scales) const;
  // Symmetric Q_b with nearest rounding, LSB-first packing, scales (host) per group: packedBytes(n, bits) into out.
  void quantizeNearest(int bits, size_t group, const float* scales, uint8_t* out) const;
  // The same codes left where x is: a uint8 tensor of packedBytes(n, bits) on x's device.
  torch::Tensor quantizeNearest(int bits, size_t group, const float* scales) const;

 private:
  torch::Tensor x_;  // flat view of the input
  const float* host_ = nullptr;
  size_t n_ = 0;
};

// The decoding side on a device: a float32 tensor of `shape` on `device` holding `values` at `indices` (host arrays of
// `count`, each index < numel, no repeats) and zeros elsewhere.
torch::Tensor scatterOnDevice(c10::IntArrayRef shape, const torch::Device& device, const uint32_t* indices,
                              const float* values, size_t count);
// Symmetric Q_b codes (host, packedBytes(numel, bits) bytes, already checked) and scales (host, one per group)
// dequantized into a float32 tensor of `shape` on `device` (a CUDA device usable() accepts).
torch::Tensor dequantizeOnDevice(c10::IntArrayRef shape, const torch::Device& device, const uint8_t* codes, int bits,
                                 size_t group, const float* scales);
// The same from codes already in a uint8 tensor (a payload's tail), on any device: copied to `device` first.
torch::Tensor dequantizeOnDevice(c10::IntArrayRef shape, const torch::Device& device, const torch::Tensor& codes,
                                 int bits, size_t group, const float* scales);
// Requires every value of `x` (float32, any device) to be finite, else calls `fail` (which throws): answered by the
// host kernel on the host, and on a device through requireOnDevice (engine/tensors/DeviceChecks.h), so a stage on a
// GPU reads the answer with its step's others instead of waiting for it here. Either way a failure waits for an open
// DeferredChecks to settle.
void requireAllFinite(const torch::Tensor& x, std::function<void()> fail);
// True when a payload decoded for `device` can be rebuilt there from its compact form.
bool decodesOnDevice(const torch::Device& device);

}  // namespace ps
