// TensorKernels on the host: the CPU kernels behind the interface a GPU codec uses, so a codec's code path is the
// same on both (its GPU side is compared with the CPU in DeviceCodecTest.cpp, on a machine with a GPU).
#include "engine/compress/TensorKernels.h"
#include "engine/kernels/KernelError.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Quantize.h"
#include "engine/kernels/Threshold.h"
#include "engine/kernels/TopK.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ps {
namespace {

TEST(TensorKernels, OnTheHostTheyAreTheCpuKernels) {
  torch::manual_seed(4);
  const auto x = torch::randn({10007});
  const float* v = x.data_ptr<float>();
  const size_t n = size_t(x.numel());
  const TensorKernels k(x);
  ASSERT_TRUE(k.onHost());
  EXPECT_EQ(k.host(), v);
  EXPECT_EQ(k.size(), n);
  EXPECT_NO_THROW(requireAllFinite(x, [] { throw std::runtime_error("not finite"); }));

  // Gathering into room that is short, exact and large: the vectors end at the count, the contents are the kernel's.
  const size_t want = kernels::countAbove(v, n, 1.f);
  std::vector<uint32_t> refIdx(want);
  std::vector<float> refVal(want);
  kernels::gatherAbove(v, n, 1.f, refIdx.data(), refVal.data(), want);
  for (size_t room : {size_t(0), want / 3, want, 4 * want}) {
    std::vector<uint32_t> idx(room);
    std::vector<float> val(room);
    EXPECT_EQ(k.gatherAbove(1.f, idx, val), want) << room;
    EXPECT_EQ(idx, refIdx);
    EXPECT_EQ(val, refVal);
  }

  std::vector<uint32_t> top(100), refTop(100);
  std::vector<float> topVal(100), refTopVal(100);
  EXPECT_EQ(k.topk(100, top.data(), topVal.data()), 100u);
  kernels::topkSelect(v, n, 100, refTop.data(), refTopVal.data());
  EXPECT_EQ(top, refTop);
  EXPECT_EQ(topVal, refTopVal);

  const std::vector<uint32_t> positions{10006, 0, 5, 5};
  std::vector<float> picked(positions.size());
  k.at(positions.data(), positions.size(), picked.data());
  for (size_t i = 0; i < positions.size(); ++i) EXPECT_EQ(picked[i], v[positions[i]]);

  // GaussianK's selection: the kernel's, whether its count lands inside the room for the band or beyond it (K = 1
  // keeps everything through a negative threshold; a tiny K on this normal lands far above k).
  for (double K : {1e-4, 0.01, 0.3, 1.0}) {
    float t = 0, refT = 0;
    const auto picked = k.gaussianHere(K, &t);
    std::vector<uint32_t> refIdx(n);
    std::vector<float> refVal(n);
    const size_t count = kernels::gaussianGather(v, n, K, refIdx.data(), refVal.data(), n, &refT);
    EXPECT_EQ(t, refT) << K;
    ASSERT_EQ(picked.size(), count) << K;
    EXPECT_TRUE(std::equal(refIdx.begin(), refIdx.begin() + long(count),
                           reinterpret_cast<const uint32_t*>(picked.positions.data_ptr<int32_t>())))
        << K;
    EXPECT_TRUE(std::equal(refVal.begin(), refVal.begin() + long(count), picked.values.data_ptr<float>())) << K;
  }
  EXPECT_THROW(TensorKernels(torch::empty({0})).gaussianHere(0.1), std::invalid_argument);
  EXPECT_THROW(k.gaussianHere(0.0), kernels::KernelError);

  const size_t group = 100, groups = (n + group - 1) / group;
  std::vector<float> scales(groups), refScales(groups);
  k.groupMaxAbs(group, scales.data());
  kernels::groupMaxAbs(v, n, group, refScales.data());
  EXPECT_EQ(scales, refScales);
  for (int bits : {1, 3, 8}) {
    std::vector<uint8_t> codes(kernels::packedBytes(n, bits)), refCodes(codes.size());
    k.quantizeNearest(bits, group, scales.data(), codes.data());
    kernels::quantizePackSymmetric(v, n, bits, group, scales.data(), kernels::Rounding::Nearest, 0, refCodes.data());
    EXPECT_EQ(codes, refCodes) << bits;
  }

  auto bad = x.clone();
  bad[7] = NAN;
  EXPECT_THROW(requireAllFinite(bad, [] { throw std::runtime_error("not finite"); }), std::runtime_error);
}

TEST(TensorKernels, AnEmptyHostTensorIsOnTheHost) {
  // An empty CPU tensor has no data pointer: it once read as "on a device", and a sparse payload kept with its
  // selection (GaussianK selecting nothing) called the CUDA kernels, or failed in a build without them.
  const TensorKernels k(torch::empty({0}));
  EXPECT_TRUE(k.onHost());
  EXPECT_EQ(k.topkHere(3).size(), 0u);
  EXPECT_EQ(k.gatherAboveHere(0.f).size(), 0u);
  EXPECT_EQ(k.quantizeNearest(4, 8, nullptr).numel(), 0);
}

TEST(TensorKernels, RefusesWhatItCannotRunOn) {
  EXPECT_TRUE(TensorKernels::usable(torch::zeros({3})));
  EXPECT_THROW(TensorKernels(torch::zeros({3}, torch::kFloat64)), std::logic_error);
  EXPECT_THROW(TensorKernels(torch::zeros({4, 4}).t()), std::logic_error);  // not contiguous
  EXPECT_FALSE(decodesOnDevice(torch::kCPU));
  if (!torch::cuda::is_available()) {
    // A CUDA tensor cannot be made here; what a codec asks first is answered for the device alone.
    std::string why;
    EXPECT_FALSE(TensorKernels::usable(torch::zeros({1}, torch::TensorOptions().device(torch::kMeta)), &why));
    EXPECT_NE(why.find("meta"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace ps
