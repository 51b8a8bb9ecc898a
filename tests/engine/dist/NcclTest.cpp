// NCCL from the CUDA toolkit (the replicas' dense all-reduce of CUDA gradients). Built whenever the toolkit has
// NCCL; without a GPU (as on the 2-core CI machine) the tests skip and say why.
#include "engine/dist/nccl/NcclGroup.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#ifdef PIPESQUEEZE_HAVE_NCCL
#include <cuda_runtime.h>
#endif

namespace ps {
namespace {

TEST(Nccl, AllReduceSumsEveryRanksDeviceBuffer) {
  std::string why;
  if (!NcclGroup::available(&why)) GTEST_SKIP() << why;
#ifdef PIPESQUEEZE_HAVE_NCCL
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const int ranks = std::min(devices, 4);  // one GPU each: NCCL refuses two ranks on one device
  std::mutex m;
  std::vector<uint8_t> id;
  bool published = false;
  std::condition_variable cv;
  auto share = [&](const std::vector<uint8_t>& mine) {
    std::unique_lock<std::mutex> lock(m);
    if (!mine.empty()) id = mine, published = true, cv.notify_all();
    cv.wait(lock, [&] { return published; });
    return id;
  };
  constexpr size_t kN = 1 << 20;
  auto results = std::vector<std::vector<float>>(size_t(ranks), std::vector<float>(kN));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      NcclGroup group(r, ranks, r, share);
      std::vector<float> host(kN);
      for (size_t i = 0; i < kN; ++i) host[i] = float(r + 1) * float(i % 97);
      float* device = nullptr;
      cudaMalloc(&device, kN * sizeof(float));
      cudaMemcpy(device, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
      group.allReduceSum(device, kN);
      cudaMemcpy(results[size_t(r)].data(), device, kN * sizeof(float), cudaMemcpyDeviceToHost);
      cudaFree(device);
    });
  for (auto& t : threads) t.join();
  const float total = float(ranks * (ranks + 1) / 2);
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < kN; i += 4099) ASSERT_EQ(results[size_t(r)][i], total * float(i % 97)) << "rank " << r;
#endif
}

TEST(Nccl, ABuildWithoutNcclSaysSo) {
  std::string why;
  if (NcclGroup::built()) GTEST_SKIP() << "this build has NCCL";
  EXPECT_FALSE(NcclGroup::available(&why));
  EXPECT_NE(why.find("no NCCL"), std::string::npos) << why;
  EXPECT_THROW(NcclGroup(0, 1, 0, [](const std::vector<uint8_t>& v) { return v; }), std::runtime_error);
}

// Rank r runs on GPU r % gpus, rank = replica * stages + stage; NCCL refuses two ranks of one communicator on one
// GPU, so every stage's replicas need distinct GPUs.
TEST(Nccl, PlacementNeedsOneGpuPerReplicaOfAStage) {
  EXPECT_EQ(NcclGroup::placementProblem(4, 2, 8), "");
  EXPECT_EQ(NcclGroup::placementProblem(1, 4, 4), "");
  EXPECT_EQ(NcclGroup::placementProblem(2, 2, 3), "");           // ranks 0,2 -> GPUs 0,2; ranks 1,3 -> GPUs 1,0
  EXPECT_EQ(NcclGroup::placementProblem(4, 1, 1), "");           // no replicas: nothing to reduce
  const std::string one = NcclGroup::placementProblem(4, 2, 1);  // one GPU for 8 ranks
  EXPECT_NE(one.find("replicas 0 and 1 of stage 0 would share GPU 0"), std::string::npos) << one;
  EXPECT_NE(one.find("8 ranks on 1 GPUs"), std::string::npos) << one;
  const std::string four = NcclGroup::placementProblem(2, 3, 4);  // ranks 0,2,4 -> GPUs 0,2,0
  EXPECT_NE(four.find("replicas 0 and 2 of stage 0 would share GPU 0"), std::string::npos) << four;
  EXPECT_EQ(NcclGroup::placementProblem(2, 2, 0), "no CUDA device");
}

}  // namespace
}  // namespace ps
