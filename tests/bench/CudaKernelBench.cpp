// The CUDA twins of the compression kernels against a device-to-device copy of the same data, in one run.
//   bench_cuda_kernels [--sizes 1,16,64] [--reps R]
// For each n (millions of random normal floats, on the GPU): median of R timed calls (after one warm-up), measured
// with CUDA events around the whole host call (launches, the count read back where a call returns one,
// synchronisation), in ms and as a ratio to cudaMemcpy of n floats on the device. Each result is also
// checked against the CPU kernel (same counts, same codes), so a fast wrong kernel cannot pass for a fast one.
// The baseline for TopK is torch.topk on |x| (unsorted) of the same data, where the LibTorch it is linked with has
// CUDA; ours also orders the result by index, which torch's does not. Prints a table and one JSON object on the last
// line. Without a usable GPU it says why and exits 0.
#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Quantize.h"
#include "engine/kernels/Threshold.h"
#include "engine/kernels/TopK.h"
#include "engine/kernels/cuda/CudaKernels.h"
#include "tests/bench/BenchArgs.h"

#include <ATen/ATen.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace k = ps::kernels;
namespace kc = ps::kernels::cuda;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <typename T>
struct DeviceBuffer {
  explicit DeviceBuffer(size_t count) { check(cudaMalloc(&p, sizeof(T) * std::max<size_t>(count, 1)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<T> host(size_t count) const {
    std::vector<T> h(count);
    check(cudaMemcpy(h.data(), p, sizeof(T) * count, cudaMemcpyDeviceToHost), "copy back");
    return h;
  }
  T* p = nullptr;
};

double medianMs(int reps, const std::function<void()>& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  f();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a), "record");
    f();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Row {
  std::string name;
  size_t n;
  double ms, ratio;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizesM = {1, 16, 64};
  int reps = 21;
  CLI::App app{"The CUDA kernels against a device-to-device copy and torch.topk, checked against the CPU kernels"};
  ps::bench::addSizes(app, sizesM, "Mi floats");
  ps::bench::addCount(app, "--reps", reps, "timings per case (the median counts)");
  ps::bench::parse(app, argc, argv);
  std::string why;
  if (!kc::available(&why)) {
    std::printf("bench_cuda_kernels: no usable GPU here (%s); nothing measured\n", why.c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device properties");
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const bool torchCuda = at::hasCUDA();
  if (!torchCuda) std::printf("the LibTorch linked here has no CUDA: no torch.topk baseline\n");
  std::vector<Row> rows;
  int mismatches = 0;
  auto agree = [&](bool same, const char* what, size_t n) {
    if (!same) ++mismatches, std::printf("  MISMATCH with the CPU kernel: %s at n=%zu\n", what, n);
  };
  for (int64_t m : sizesM) {
    const size_t n = size_t(m) << 20;
    std::vector<float> x(n);
    std::mt19937 g(7);
    std::normal_distribution<float> normal;
    for (auto& v : x) v = normal(g);
    DeviceBuffer<float> dx(n), dcopy(n), dval(n), dout(n);
    DeviceBuffer<uint32_t> didx(n);
    check(cudaMemcpy(dx.p, x.data(), n * 4, cudaMemcpyHostToDevice), "upload");
    const double copy = medianMs(reps, [&] { check(cudaMemcpy(dcopy.p, dx.p, n * 4, cudaMemcpyDeviceToDevice), "d2d"); });
    rows.push_back({"memcpy (device to device)", n, copy, 1.0});
    auto add = [&](const std::string& name, double ms) {
      rows.push_back({name, n, ms, ms / copy});
      std::printf("  n=%3zuM %-36s %9.3f ms  %6.2fx copy\n", m, name.c_str(), ms, ms / copy);
    };
    for (double density : {0.01, 0.10}) {
      const size_t kk = size_t(double(n) * density);
      const std::string pct = density < 0.05 ? "1%" : "10%";
      // The threshold that keeps about kk: what GaussianK's estimate feeds the count and the gather.
      const float t = k::kthLargestAbs(x.data(), n, kk);
      size_t got = 0;
      add("countAbove+gatherAbove " + pct, medianMs(reps, [&] {
            kc::countAbove(dx.p, n, t);
            got = kc::gatherAbove(dx.p, n, t, didx.p, dval.p);
          }));
      agree(got == k::countAbove(x.data(), n, t), "gather count", n);
      // GaussianK whole, as a GPU codec runs it: moments, up to three counts and the gather, one read for the count.
      float searched = 0;
      add("GaussianK search+gather " + pct, medianMs(reps, [&] {
            searched = kc::gaussianSearch(dx.p, n, k::gaussianQuantile(density), k::gaussianTarget(n, density), &got);
            kc::gatherAboveCounted(dx.p, n, searched, didx.p, dval.p);
          }));
      agree(got == k::countAbove(x.data(), n, searched), "GaussianK count", n);
      size_t sel = 0;
      const double ours = medianMs(reps, [&] { sel = kc::topkSelect(dx.p, n, kk, didx.p, dval.p); });
      add("topkSelect (exact) " + pct, ours);
      std::vector<uint32_t> idx(kk);
      std::vector<float> val(kk);
      k::topkSelect(x.data(), n, kk, idx.data(), val.data());
      agree(sel == kk && didx.host(kk) == idx, "topk indices", n);
      if (torchCuda) {
        const auto xt = at::from_blob(dx.p, {int64_t(n)}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, 0));
        const double theirs = medianMs(reps, [&] { at::topk(xt.abs(), int64_t(kk), 0, true, false); });
        add("torch.topk(|x|, unsorted) " + pct, theirs);
        std::printf("  n=%3zuM topkSelect %s: %.2fx the speed of torch.topk\n", m, pct.c_str(), theirs / ours);
      }
    }
    const size_t group = 512, groups = (n + group - 1) / group, bytes = k::packedBytes(n, 8);
    DeviceBuffer<float> dscales(groups);
    DeviceBuffer<uint8_t> dpacked(bytes);
    add("quantize 8-bit (max-abs, pack, unpack)", medianMs(reps, [&] {
          kc::groupMaxAbs(dx.p, n, group, dscales.p);
          kc::quantizePackSymmetric(dx.p, n, 8, group, dscales.p, dpacked.p);
          kc::unpackDequantizeSymmetric(dpacked.p, n, 8, group, dscales.p, dout.p);
        }));
    std::vector<float> scales(groups);
    k::groupMaxAbs(x.data(), n, group, scales.data());
    std::vector<uint8_t> packed(bytes);
    k::quantizePackSymmetric(x.data(), n, 8, group, scales.data(), k::Rounding::Nearest, 0, packed.data());
    agree(dscales.host(groups) == scales && dpacked.host(bytes) == packed, "8-bit codes", n);
    std::printf("  n=%3zuM memcpy %.3f ms\n", m, copy);
  }
  std::printf("{\"bench\":\"cuda_kernels\",\"device\":\"%s\",\"mismatches\":%d,\"rows\":[", prop.name, mismatches);
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("%s{\"kernel\":\"%s\",\"n\":%zu,\"ms\":%.4f,\"x_copy\":%.3f}", i ? "," : "", rows[i].name.c_str(),
                rows[i].n, rows[i].ms, rows[i].ratio);
  std::printf("]}\n");
  return mismatches ? 1 : 0;
}
