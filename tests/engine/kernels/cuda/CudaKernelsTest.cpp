// The CUDA kernels against the CPU kernels, element for element. Skipped, with the reason, without a GPU.
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Quantize.h"
#include "engine/kernels/Threshold.h"
#include "engine/kernels/TopK.h"
#include "engine/kernels/cuda/CudaKernels.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ps::kernels {
namespace {

template <typename T>
struct Device {
  explicit Device(size_t n) : n(n) { cudaMalloc(&p, sizeof(T) * std::max<size_t>(n, 1)); }
  Device(const std::vector<T>& host) : Device(host.size()) {
    cudaMemcpy(p, host.data(), sizeof(T) * n, cudaMemcpyHostToDevice);
  }
  ~Device() { cudaFree(p); }
  std::vector<T> host(size_t count) const {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), p, sizeof(T) * count, cudaMemcpyDeviceToHost);
    return h;
  }
  T* p = nullptr;
  size_t n;
};

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda::available(&why)) GTEST_SKIP() << "no usable GPU here (" << why << "); run on a machine with one";
    std::mt19937 g(3);
    std::normal_distribution<float> normal;
    x.resize(1 << 20);
    for (auto& v : x) v = normal(g);
    for (size_t i = 0; i < x.size(); i += 97) x[i] = 1.5f;  // ties
  }
  std::vector<float> x;
};

TEST_F(CudaKernels, ThresholdCountAndGatherMatchTheCpu) {
  Device<float> dx(x);
  EXPECT_EQ(cuda::countAbove(dx.p, x.size(), 1.0f), countAbove(x.data(), x.size(), 1.0f));
  const size_t want = countAbove(x.data(), x.size(), 1.0f);
  std::vector<uint32_t> idx(want);
  std::vector<float> val(want);
  gatherAbove(x.data(), x.size(), 1.0f, idx.data(), val.data(), want);
  Device<uint32_t> di(want);
  Device<float> dv(want);
  ASSERT_EQ(cuda::gatherAbove(dx.p, x.size(), 1.0f, di.p, dv.p), want);
  EXPECT_EQ(di.host(want), idx);
  EXPECT_EQ(dv.host(want), val);
}

TEST_F(CudaKernels, TopKMatchesTheCpuIncludingTies) {
  Device<float> dx(x);
  for (size_t k : {size_t(1), size_t(1000), size_t(10486), size_t(300000)}) {
    EXPECT_EQ(cuda::kthLargestAbs(dx.p, x.size(), k), kthLargestAbs(x.data(), x.size(), k)) << k;
    std::vector<uint32_t> idx(k);
    std::vector<float> val(k);
    topkSelect(x.data(), x.size(), k, idx.data(), val.data());
    Device<uint32_t> di(x.size());
    Device<float> dv(x.size());
    ASSERT_EQ(cuda::topkSelect(dx.p, x.size(), k, di.p, dv.p), k);
    EXPECT_EQ(di.host(k), idx) << k;
  }
}

TEST_F(CudaKernels, QuantizePackAndUnpackMatchTheCpu) {
  Device<float> dx(x);
  const size_t group = 512, groups = (x.size() + group - 1) / group;
  std::vector<float> scales(groups);
  groupMaxAbs(x.data(), x.size(), group, scales.data());
  Device<float> ds(groups);
  cuda::groupMaxAbs(dx.p, x.size(), group, ds.p);
  EXPECT_EQ(ds.host(groups), scales);
  for (int bits : {1, 2, 4, 8}) {
    const size_t bytes = packedBytes(x.size(), bits);
    std::vector<uint8_t> packed(bytes);
    quantizePackSymmetric(x.data(), x.size(), bits, group, scales.data(), Rounding::Nearest, 0, packed.data());
    Device<uint8_t> dp(bytes);
    cuda::quantizePackSymmetric(dx.p, x.size(), bits, group, ds.p, dp.p);
    EXPECT_EQ(dp.host(bytes), packed) << bits << " bits";
    std::vector<float> out(x.size());
    unpackDequantizeSymmetric(packed.data(), bytes, x.size(), bits, group, scales.data(), out.data());
    Device<float> dout(x.size());
    cuda::unpackDequantizeSymmetric(dp.p, x.size(), bits, group, ds.p, dout.p);
    EXPECT_EQ(dout.host(x.size()), out) << bits << " bits";
  }
}

// NaN and the infinities order as on the CPU (NaN above +inf, all NaNs equal), negative thresholds keep everything,
// a NaN threshold is refused, and empty input costs nothing.
TEST_F(CudaKernels, NanInfAndOddThresholdsBehaveLikeTheCpu) {
  for (size_t i = 11; i < x.size(); i += 50021) x[i] = (i / 50021) % 3 == 0 ? NAN : (i / 50021) % 3 == 1 ? -NAN : INFINITY;
  x[7] = -INFINITY;
  Device<float> dx(x);
  Device<uint32_t> di(x.size());
  Device<float> dv(x.size());
  for (float t : {0.f, 1.f, 3.f, INFINITY, -1.f}) {
    const size_t want = countAbove(x.data(), x.size(), t);
    EXPECT_EQ(cuda::countAbove(dx.p, x.size(), t), want) << t;
    std::vector<uint32_t> idx(want);
    std::vector<float> val(want);
    gatherAbove(x.data(), x.size(), t, idx.data(), val.data(), want);
    ASSERT_EQ(cuda::gatherAbove(dx.p, x.size(), t, di.p, dv.p), want) << t;
    EXPECT_EQ(di.host(want), idx) << t;
  }
  EXPECT_THROW(cuda::countAbove(dx.p, x.size(), NAN), std::invalid_argument);
  EXPECT_EQ(cuda::countAbove(dx.p, 0, 1.f), 0u);
  for (size_t k : {size_t(1), size_t(3), size_t(21), size_t(22), size_t(5000)}) {  // the k-th is NaN, inf, finite
    const float cpu = kthLargestAbs(x.data(), x.size(), k), gpu = cuda::kthLargestAbs(dx.p, x.size(), k);
    EXPECT_TRUE(std::isnan(cpu) ? std::isnan(gpu) : gpu == cpu) << k;
    std::vector<uint32_t> idx(k);
    std::vector<float> val(k);
    topkSelect(x.data(), x.size(), k, idx.data(), val.data());
    ASSERT_EQ(cuda::topkSelect(dx.p, x.size(), k, di.p, dv.p), k) << k;
    EXPECT_EQ(di.host(k), idx) << k;
  }
  EXPECT_THROW(cuda::quantizePackSymmetric(dx.p, x.size(), 9, 512, dv.p, nullptr), std::invalid_argument);
  EXPECT_THROW(cuda::groupMaxAbs(dx.p, x.size(), 0, dv.p), std::invalid_argument);
}

// GaussianK's search on the device: the CPU's search from the same moments (GaussianSearch.h) up to the last bits of
// those moments (summed in another order), so the threshold agrees to a few ulps, and given the device's threshold
// the count and the selection are exactly the CPU's. Inputs: a normal, a half-normal (a ReLU's), a large common
// offset, heavy tails, and one with infinities (their moments are of the finite values, as on the CPU).
TEST_F(CudaKernels, GaussianSearchFollowsTheCpusSearch) {
  std::mt19937 g(11);
  std::normal_distribution<float> normal;
  std::cauchy_distribution<float> cauchy;
  const size_t n = (1 << 20) + 333;
  std::vector<std::vector<float>> inputs(5, std::vector<float>(n));
  for (size_t i = 0; i < n; ++i) {
    const float v = normal(g);
    inputs[0][i] = v, inputs[1][i] = std::max(v, 0.f), inputs[2][i] = 1000.f + v, inputs[3][i] = cauchy(g);
    inputs[4][i] = i % 4099 == 5 ? INFINITY : v;
  }
  Device<uint32_t> di(n);
  Device<float> dv(n);
  for (size_t which = 0; which < inputs.size(); ++which) {
    const std::vector<float>& h = inputs[which];
    Device<float> dx(h);
    for (double K : {0.001, 0.01, 0.1, 0.5, 1.0}) {
      SCOPED_TRACE("input " + std::to_string(which) + " K " + std::to_string(K));
      size_t cpuCount = 0, gpuCount = 0;
      const float cpu = gaussianThreshold(h.data(), n, K, &cpuCount);
      const float gpu = cuda::gaussianSearch(dx.p, n, gaussianQuantile(K), gaussianTarget(n, K), &gpuCount);
      EXPECT_NEAR(gpu, cpu, 1e-4 * std::max(1.f, std::fabs(cpu)));
      EXPECT_EQ(gpuCount, countAbove(h.data(), n, gpu));
      std::vector<uint32_t> idx(gpuCount);
      std::vector<float> val(gpuCount);
      gatherAbove(h.data(), n, gpu, idx.data(), val.data(), gpuCount);
      cuda::gatherAboveCounted(dx.p, n, gpu, di.p, dv.p);
      EXPECT_EQ(di.host(gpuCount), idx);
      EXPECT_EQ(dv.host(gpuCount), val);
    }
  }
  Device<float> one(std::vector<float>{-2.5f});
  size_t count = 7;
  // One element: stddev 0, so t is the element, negative here, and keeps everything, as on the CPU.
  EXPECT_EQ(cuda::gaussianSearch(one.p, 1, gaussianQuantile(0.5), 1, &count), -2.5f);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(gaussianThreshold(std::vector<float>{-2.5f}.data(), 1, 0.5, nullptr), -2.5f);
  EXPECT_THROW(cuda::gaussianSearch(one.p, 0, 1.0, 1, &count), std::invalid_argument);
}

// Few distinct magnitudes, so ties at the k-th value run across the 4096-element tiles of the ordered compaction
// and across the 1024-tile steps of its scan; sizes that end mid-tile and mid-warp, and a start that is not
// 16-byte aligned (a tensor's view can begin anywhere).
TEST_F(CudaKernels, TopKAndGatherMatchTheCpuWhereTiesCrossTilesAndScanSteps) {
  std::mt19937 g(5);
  std::uniform_int_distribution<int> level(-4, 4);
  for (size_t n : {size_t(1), size_t(31), size_t(4095), size_t(4096), size_t(4097), size_t(3 * 4096 + 17),
                   size_t(1025 * 4096 + 33), size_t(2 * 1024 * 4096 + 12345)}) {
    std::vector<float> v(n + 1);
    for (auto& e : v) e = 0.5f * float(level(g));
    const float* host = v.data() + 1;  // the unaligned start
    Device<float> dv(v);
    const float* dx = dv.p + 1;
    Device<uint32_t> di(n);
    Device<float> dval(n);
    for (size_t k : {size_t(1), n / 7 + 1, std::max<size_t>(n / 2, 1), n - n / 9, n}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", k " + std::to_string(k));
      std::vector<uint32_t> idx(k);
      std::vector<float> val(k);
      topkSelect(host, n, k, idx.data(), val.data());
      ASSERT_EQ(cuda::topkSelect(dx, n, k, di.p, dval.p), k);
      ASSERT_EQ(di.host(k), idx);
      ASSERT_EQ(dval.host(k), val);
      EXPECT_EQ(cuda::kthLargestAbs(dx, n, k), kthLargestAbs(host, n, k));
    }
    for (float t : {0.f, 0.5f, 1.f, 2.f}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", threshold " + std::to_string(t));
      const size_t want = countAbove(host, n, t);
      ASSERT_EQ(cuda::countAbove(dx, n, t), want);
      std::vector<uint32_t> idx(want);
      std::vector<float> val(want);
      gatherAbove(host, n, t, idx.data(), val.data(), want);
      ASSERT_EQ(cuda::gatherAbove(dx, n, t, di.p, dval.p), want);
      ASSERT_EQ(di.host(want), idx);
      ASSERT_EQ(dval.host(want), val);
    }
  }
}

// Every host thread has scratch of its own: calls from several threads at once give each its own right answer.
TEST_F(CudaKernels, CallsFromSeveralThreadsAtOnceEachGetTheirOwnResult) {
  const size_t n = x.size();
  std::vector<std::vector<uint32_t>> want(4);
  for (size_t t = 0; t < want.size(); ++t) {
    const size_t k = 1000 * (t + 1);
    want[t].resize(k);
    std::vector<float> val(k);
    topkSelect(x.data(), n, k, want[t].data(), val.data());
  }
  Device<float> dx(x);
  std::vector<std::thread> threads;
  std::vector<int> wrong(want.size(), 0);
  for (size_t t = 0; t < want.size(); ++t)
    threads.emplace_back([&, t] {
      const size_t k = want[t].size();
      Device<uint32_t> di(k);
      Device<float> dv(k);
      for (int round = 0; round < 20; ++round) {
        cuda::topkSelect(dx.p, n, k, di.p, dv.p);
        wrong[t] += di.host(k) != want[t];
      }
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < want.size(); ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

// The kernels queue their work on the stream of the thread's scope, not on the legacy default stream: captured there
// into a CUDA graph (a launch on another stream would have broken the capture, and the legacy stream is not allowed
// to be touched during one), then replayed, quantization gives the CPU's bytes; a top-k on that stream, whose count it
// reads back, waits for that stream alone and matches too.
TEST_F(CudaKernels, WorkGoesOnTheScopesStreamAndCanBeCapturedThere) {
  const size_t n = x.size(), group = 512, groups = (n + group - 1) / group;
  const int bits = 4;
  std::vector<float> scales(groups);
  groupMaxAbs(x.data(), n, group, scales.data());
  std::vector<uint8_t> packed(packedBytes(n, bits));
  quantizePackSymmetric(x.data(), n, bits, group, scales.data(), Rounding::Nearest, 0, packed.data());
  Device<float> dx(x), ds(groups);
  Device<uint8_t> dp(packed.size());
  ASSERT_EQ(cudaMemset(dp.p, 0, packed.size()), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    cuda::StreamScope scope(stream);
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    cuda::groupMaxAbs(dx.p, n, group, ds.p);
    cuda::quantizePackSymmetric(dx.p, n, bits, group, ds.p, dp.p);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    EXPECT_EQ(dp.host(packed.size()), std::vector<uint8_t>(packed.size(), 0)) << "nothing ran during the capture";
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(ds.host(groups), scales);
    EXPECT_EQ(dp.host(packed.size()), packed);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    const size_t k = 1000;
    std::vector<uint32_t> idx(k);
    std::vector<float> val(k);
    topkSelect(x.data(), n, k, idx.data(), val.data());
    Device<uint32_t> di(k);
    Device<float> dv(k);
    ASSERT_EQ(cuda::topkSelect(dx.p, n, k, di.p, dv.p), k);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(di.host(k), idx);
  }
  cudaStreamDestroy(stream);
}

// A group holding a NaN reports NaN on both (the CPU's scale check then rejects it); fmaxf alone would skip it.
TEST_F(CudaKernels, GroupMaxAbsReportsNanLikeTheCpu) {
  x[5000] = NAN;
  Device<float> dx(x);
  const size_t group = 512, groups = (x.size() + group - 1) / group;
  std::vector<float> scales(groups);
  groupMaxAbs(x.data(), x.size(), group, scales.data());
  Device<float> ds(groups);
  cuda::groupMaxAbs(dx.p, x.size(), group, ds.p);
  const auto got = ds.host(groups);
  for (size_t g = 0; g < groups; ++g) {
    ASSERT_EQ(std::isnan(got[g]), std::isnan(scales[g])) << "group " << g;
    if (!std::isnan(got[g])) ASSERT_EQ(got[g], scales[g]) << "group " << g;
  }
  EXPECT_TRUE(std::isnan(got[5000 / group]));
}

// Values placed on rounding boundaries: x * inv + offset lands exactly on .5 before rounding, where a fused
// multiply-add (one rounding instead of two) would pick the other code.
TEST_F(CudaKernels, QuantizeOnRoundingBoundariesMatchesTheCpu) {
  const size_t group = 256;
  std::mt19937 g(11);
  std::uniform_int_distribution<int> level(-127, 126);
  for (size_t i = 0; i < x.size(); ++i) {
    if (i % group == 0) x[i] = 3.3f;  // every group's max-abs, so the scale is the same everywhere
    else x[i] = (float(level(g)) + 0.5f) * (3.3f / 128.f) * (1.f + float(int(i % 7) - 3) * 1e-7f);
  }
  Device<float> dx(x);
  const size_t groups = x.size() / group, bytes = packedBytes(x.size(), 8);
  std::vector<float> scales(groups);
  groupMaxAbs(x.data(), x.size(), group, scales.data());
  Device<float> ds(scales);
  std::vector<uint8_t> packed(bytes);
  quantizePackSymmetric(x.data(), x.size(), 8, group, scales.data(), Rounding::Nearest, 0, packed.data());
  Device<uint8_t> dp(bytes);
  cuda::quantizePackSymmetric(dx.p, x.size(), 8, group, ds.p, dp.p);
  const auto got = dp.host(bytes);
  size_t differ = 0;
  for (size_t i = 0; i < bytes; ++i) differ += got[i] != packed[i];
  EXPECT_EQ(differ, 0u) << "codes differ from the CPU's";
}

}  // namespace
}  // namespace ps::kernels
