#include "engine/compress/TensorKernels.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Quantize.h"
#include "engine/kernels/TopK.h"
#include "engine/tensors/DeviceChecks.h"
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
#include "engine/kernels/cuda/CudaKernels.h"
#include "engine/tensors/CudaStreams.h"
#endif

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace ps {
namespace {

// Host memory viewed as a CPU tensor, for copies to and from the device (no allocation).
template <typename T>
torch::Tensor hostView(T* data, size_t count, torch::ScalarType type) {
  return torch::from_blob(const_cast<std::remove_const_t<T>*>(data), {int64_t(count)}, torch::TensorOptions(type));
}

torch::TensorOptions onDeviceOf(const torch::Tensor& x, torch::ScalarType type) {
  return torch::TensorOptions(type).device(x.device());
}

// uint32 positions held in an int32 tensor as the int64 indices torch wants, masked so positions of 2^31 and above do
// not read as negative.
torch::Tensor widened(const torch::Tensor& positions) {
  return positions.to(torch::kInt64).bitwise_and(int64_t(0xffffffff));
}

// Element positions (host, uint32) as those indices on `device`: copied as int32 and widened there.
torch::Tensor devicePositions(const uint32_t* positions, size_t count, const torch::Device& device) {
  return widened(hostView(positions, count, torch::kInt32).to(device));
}

#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
namespace cu = kernels::cuda;
// The CUDA twins run on the thread's current device, the tensor's for the call, and on the stream torch queues this
// thread's work on there (a stage's own), after what made their inputs.
struct On {
  explicit On(const torch::Device& d)
      : scope(d.index() < 0 ? 0 : d.index()), stream(currentCudaStream(d.index() < 0 ? 0 : d.index())) {}
  cu::DeviceScope scope;
  cu::StreamScope stream;
};
uint32_t* u32m(torch::Tensor& t) {
  return reinterpret_cast<uint32_t*>(t.data_ptr<int32_t>());
}
#endif

[[noreturn]] void noKernels() {
  throw std::logic_error("TensorKernels: this build has no CUDA kernels for a tensor on a GPU");
}

}  // namespace

bool TensorKernels::built() {
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

bool TensorKernels::usable(const torch::Tensor& x, std::string* why) {
  if (x.device().is_cpu()) return true;
  if (!x.device().is_cuda()) {
    if (why) *why = "codecs run kernels on the CPU and on CUDA devices, not on " + x.device().str();
    return false;
  }
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  return cu::available(why);
#else
  if (why) *why = "this build has no CUDA kernels (configure with PIPESQUEEZE_CUDA=ON where nvcc is found)";
  return false;
#endif
}

void requireAllFinite(const torch::Tensor& x, std::function<void()> fail) {
  if (x.numel() == 0) return;
  if (x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.is_contiguous())
    return requireOnHost(kernels::allFinite(x.data_ptr<float>(), size_t(x.numel())), std::move(fail));
  requireOnDevice(x.isfinite().all(), std::move(fail));
}

bool decodesOnDevice(const torch::Device& device) {
  if (!device.is_cuda()) return false;
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  return cu::available();
#else
  return false;
#endif
}

TensorKernels::TensorKernels(const torch::Tensor& x) : n_(size_t(x.numel())) {
  if (x.scalar_type() != torch::kFloat32 || !x.is_contiguous())
    throw std::logic_error("TensorKernels: the input must be contiguous float32");
  x_ = x.view({-1});  // flat: positions index elements, not rows (index_select on dimension 0)
  static float none = 0;  // an empty CPU tensor may have no data pointer; the host kernels read nothing of it
  if (x.device().is_cpu())
    host_ = n_ ? x.data_ptr<float>() : &none;
  else if (!x.device().is_cuda() || !built())
    noKernels();
}

size_t TensorKernels::gatherAbove(float t, std::vector<uint32_t>& indices, std::vector<float>& values) const {
  if (host_) {
    const size_t room = std::min(indices.size(), values.size());
    size_t count = kernels::gatherAbove(host_, n_, t, indices.data(), values.data(), room);
    if (count > room) {  // the room was short: gather again with the exact count
      indices.resize(count);
      values.resize(count);
      count = kernels::gatherAbove(host_, n_, t, indices.data(), values.data(), count);
    }
    indices.resize(count);
    values.resize(count);
    return count;
  }
  const Picked picked = gatherAboveHere(t);
  const size_t count = picked.size();
  indices.resize(count);
  values.resize(count);
  if (count) {
    hostView(indices.data(), count, torch::kInt32).copy_(picked.positions);
    hostView(values.data(), count, torch::kFloat32).copy_(picked.values);
  }
  return count;
}

size_t TensorKernels::topk(size_t k, uint32_t* indices, float* values) const {
  if (host_) return kernels::topkSelect(host_, n_, k, indices, values);
  const Picked picked = topkHere(k);
  k = picked.size();
  if (k) {
    hostView(indices, k, torch::kInt32).copy_(picked.positions);
    hostView(values, k, torch::kFloat32).copy_(picked.values);
  }
  return k;
}

torch::Tensor TensorKernels::Picked::indices() const {
  return widened(positions);
}

TensorKernels::Picked TensorKernels::gatherAboveHere(float t) const {
  if (host_) {
    std::vector<uint32_t> indices;
    std::vector<float> values;
    const size_t count = gatherAbove(t, indices, values);
    return {hostView(indices.data(), count, torch::kInt32).clone(),
            hostView(values.data(), count, torch::kFloat32).clone()};
  }
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  On on(x_.device());
  const size_t count = cu::countAbove(x_.data_ptr<float>(), n_, t);
  auto idx = torch::empty({int64_t(std::max<size_t>(count, 1))}, onDeviceOf(x_, torch::kInt32));
  auto val = torch::empty({int64_t(std::max<size_t>(count, 1))}, onDeviceOf(x_, torch::kFloat32));
  cu::gatherAbove(x_.data_ptr<float>(), n_, t, u32m(idx), val.data_ptr<float>());
  return {idx.narrow(0, 0, int64_t(count)), val.narrow(0, 0, int64_t(count))};
#else
  noKernels();
#endif
}

TensorKernels::Picked TensorKernels::gaussianHere(double K, float* threshold) const {
  if (n_ == 0) throw std::invalid_argument("GaussianK: empty input");
  float t = 0;
  if (host_) {
    // Room for the accepted band (4k/3); a count beyond it is gathered again at its size.
    const size_t k = kernels::gaussianTarget(n_, K), room = std::min(n_, (4 * k + 2) / 3 + 1);
    auto idx = torch::empty({int64_t(room)}, torch::kInt32), val = torch::empty({int64_t(room)}, torch::kFloat32);
    auto* positions = reinterpret_cast<uint32_t*>(idx.data_ptr<int32_t>());
    size_t count = kernels::gaussianGather(host_, n_, K, positions, val.data_ptr<float>(), room, &t);
    if (count > room) {
      idx = torch::empty({int64_t(count)}, torch::kInt32), val = torch::empty({int64_t(count)}, torch::kFloat32);
      kernels::gatherAbove(host_, n_, t, reinterpret_cast<uint32_t*>(idx.data_ptr<int32_t>()), val.data_ptr<float>(),
                           count);
    }
    if (threshold) *threshold = t;
    return {idx.narrow(0, 0, int64_t(count)), val.narrow(0, 0, int64_t(count))};
  }
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  On on(x_.device());
  size_t count = 0;
  t = cu::gaussianSearch(x_.data_ptr<float>(), n_, kernels::gaussianQuantile(K), kernels::gaussianTarget(n_, K),
                         &count);
  auto idx = torch::empty({int64_t(std::max<size_t>(count, 1))}, onDeviceOf(x_, torch::kInt32));
  auto val = torch::empty({int64_t(std::max<size_t>(count, 1))}, onDeviceOf(x_, torch::kFloat32));
  if (count) cu::gatherAboveCounted(x_.data_ptr<float>(), n_, t, u32m(idx), val.data_ptr<float>());
  if (threshold) *threshold = t;
  return {idx.narrow(0, 0, int64_t(count)), val.narrow(0, 0, int64_t(count))};
#else
  noKernels();
#endif
}

TensorKernels::Picked TensorKernels::topkHere(size_t k) const {
  k = std::min(k, n_);
  auto idx = torch::empty({int64_t(k)}, onDeviceOf(x_, torch::kInt32));
  auto val = torch::empty({int64_t(k)}, onDeviceOf(x_, torch::kFloat32));
  if (k == 0) return {idx, val};
  if (host_) {
    kernels::topkSelect(host_, n_, k, reinterpret_cast<uint32_t*>(idx.data_ptr<int32_t>()), val.data_ptr<float>());
    return {idx, val};
  }
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  On on(x_.device());
  cu::topkSelect(x_.data_ptr<float>(), n_, k, u32m(idx), val.data_ptr<float>());
  return {idx, val};
#else
  noKernels();
#endif
}

void TensorKernels::at(const uint32_t* positions, size_t m, float* out) const {
  if (host_) {
    for (size_t i = 0; i < m; ++i) out[i] = host_[positions[i]];
    return;
  }
  if (m == 0) return;
  hostView(out, m, torch::kFloat32).copy_(x_.index_select(0, devicePositions(positions, m, x_.device())));
}

void TensorKernels::groupMaxAbs(size_t group, float* scales) const {
  if (host_) return kernels::groupMaxAbs(host_, n_, group, scales);
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  const size_t groups = kernels::groupCount(n_, group);
  if (groups == 0) return;
  On on(x_.device());
  auto out = torch::empty({int64_t(groups)}, onDeviceOf(x_, torch::kFloat32));
  cu::groupMaxAbs(x_.data_ptr<float>(), n_, group, out.data_ptr<float>());
  hostView(scales, groups, torch::kFloat32).copy_(out);
#else
  noKernels();
#endif
}

void TensorKernels::quantizeNearest(int bits, size_t group, const float* scales, uint8_t* out) const {
  if (host_) return kernels::quantizePackSymmetric(host_, n_, bits, group, scales, kernels::Rounding::Nearest, 0, out);
  const auto codes = quantizeNearest(bits, group, scales);
  if (codes.numel() > 0) hostView(out, size_t(codes.numel()), torch::kUInt8).copy_(codes);
}

torch::Tensor TensorKernels::quantizeNearest(int bits, size_t group, const float* scales) const {
  const size_t bytes = kernels::packedBytes(n_, bits);
  auto codes = torch::empty({int64_t(bytes)}, onDeviceOf(x_, torch::kUInt8));
  if (bytes == 0) return codes;
  if (host_) {
    kernels::quantizePackSymmetric(host_, n_, bits, group, scales, kernels::Rounding::Nearest, 0,
                                   codes.data_ptr<uint8_t>());
    return codes;
  }
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  On on(x_.device());
  auto s = hostView(scales, kernels::groupCount(n_, group), torch::kFloat32).to(x_.device());
  cu::quantizePackSymmetric(x_.data_ptr<float>(), n_, bits, group, s.data_ptr<float>(), codes.data_ptr<uint8_t>());
  return codes;
#else
  (void)scales;
  noKernels();
#endif
}

torch::Tensor scatterOnDevice(c10::IntArrayRef shape, const torch::Device& device, const uint32_t* indices,
                              const float* values, size_t count) {
  auto out = torch::zeros({c10::multiply_integers(shape)}, torch::TensorOptions(torch::kFloat32).device(device));
  if (count)
    out.index_copy_(0, devicePositions(indices, count, device), hostView(values, count, torch::kFloat32).to(device));
  return out.view(shape);
}

torch::Tensor dequantizeOnDevice(c10::IntArrayRef shape, const torch::Device& device, const uint8_t* codes, int bits,
                                 size_t group, const float* scales) {
  const size_t n = size_t(c10::multiply_integers(shape));
  const size_t bytes = n ? kernels::packedBytes(n, bits) : 0;
  return dequantizeOnDevice(shape, device, hostView(codes, bytes, torch::kUInt8), bits, group, scales);
}

torch::Tensor dequantizeOnDevice(c10::IntArrayRef shape, const torch::Device& device, const torch::Tensor& codes,
                                 int bits, size_t group, const float* scales) {
  const int64_t n = c10::multiply_integers(shape);
  auto out = torch::empty({n}, torch::TensorOptions(torch::kFloat32).device(device));
#ifdef PIPESQUEEZE_HAVE_CUDA_KERNELS
  if (n > 0) {
    const size_t groups = kernels::groupCount(size_t(n), group);
    if (uint64_t(codes.numel()) != kernels::packedBytes(size_t(n), bits))
      throw std::logic_error("dequantizeOnDevice: the codes do not fit the shape");
    On on(device);
    auto c = codes.to(device).contiguous();  // from the host, or from a peer GPU
    auto s = hostView(scales, groups, torch::kFloat32).to(device);
    kernels::cuda::unpackDequantizeSymmetric(c.data_ptr<uint8_t>(), size_t(n), bits, group, s.data_ptr<float>(),
                                             out.data_ptr<float>());
  }
  return out.view(shape);
#else
  (void)codes, (void)bits, (void)group, (void)scales;
  noKernels();
#endif
}

}  // namespace ps
