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

// One link between two ranks, a group per direction: each rank sends before it receives (1F1B sends both ways at
// once), payload sizes from one byte to several chunks of a staging buffer, every byte checked.
TEST(Nccl, PointToPointCarriesPayloadsBothWaysWhileBothEndsSendFirst) {
  std::string why;
  if (!NcclGroup::available(&why)) GTEST_SKIP() << why;
#ifdef PIPESQUEEZE_HAVE_NCCL
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "one GPU: NCCL refuses the two ends of a link on the same device";
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::vector<uint8_t>> ids(2);
  auto shareFor = [&](int direction) {
    return [&, direction](const std::vector<uint8_t>& mine) {
      std::unique_lock<std::mutex> lock(m);
      if (!mine.empty()) ids[size_t(direction)] = mine, cv.notify_all();
      cv.wait(lock, [&] { return !ids[size_t(direction)].empty(); });
      return ids[size_t(direction)];
    };
  };
  const std::vector<size_t> sizes = {1, 7, 4096, (size_t(5) << 20) + 3, 17, (size_t(1) << 22)};
  auto payload = [](int from, size_t message, size_t size) {
    std::vector<uint8_t> v(size);
    for (size_t i = 0; i < size; ++i) v[i] = uint8_t((i * 131 + message * 7 + size_t(from) * 29) >> 1);
    return v;
  };
  std::vector<std::string> failures(2);
  std::vector<std::thread> ends;
  for (int r = 0; r < 2; ++r)
    ends.emplace_back([&, r] {
      try {
        // Forward: rank 0 sends. Backward: rank 1 sends. Both join the forward group first.
        NcclGroup forward(r, 2, r, shareFor(0)), backward(r, 2, r, shareFor(1));
        NcclGroup& out = r == 0 ? forward : backward;
        NcclGroup& in = r == 0 ? backward : forward;
        for (size_t i = 0; i < sizes.size(); ++i) {
          const auto mine = payload(r, i, sizes[i]);
          out.send(mine.data(), mine.size(), 1 - r);
          std::vector<uint8_t> got(sizes[i]);
          in.receive(got.data(), got.size(), 1 - r);
          if (got != payload(1 - r, i, sizes[i])) failures[size_t(r)] += "message " + std::to_string(i) + " differs; ";
        }
        // The same from device memory to device memory (a payload's tail), the sender's buffer freed only by the
        // group once its send is done.
        cudaSetDevice(r);
        for (size_t i = 0; i < sizes.size(); ++i) {
          const auto mine = payload(r, i + 100, sizes[i]);
          void* d = nullptr;
          if (cudaMalloc(&d, mine.size()) != cudaSuccess ||
              cudaMemcpy(d, mine.data(), mine.size(), cudaMemcpyHostToDevice))
            throw std::runtime_error("cudaMalloc/cudaMemcpy failed");
          out.sendDevice(d, mine.size(), 1 - r, std::shared_ptr<void>(d, [](void* p) { cudaFree(p); }));
          void* into = nullptr;
          if (cudaMalloc(&into, sizes[i]) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
          in.receiveDevice(into, sizes[i], 1 - r);
          std::vector<uint8_t> got(sizes[i]);
          cudaMemcpy(got.data(), into, sizes[i], cudaMemcpyDeviceToHost);
          cudaFree(into);
          if (got != payload(1 - r, i + 100, sizes[i]))
            failures[size_t(r)] += "device message " + std::to_string(i) + " differs; ";
        }
      } catch (const std::exception& e) {
        failures[size_t(r)] += e.what();
      }
    });
  for (auto& t : ends) t.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
#endif
}

TEST(Nccl, ABuildWithoutNcclSaysSo) {
  std::string why;
  if (NcclGroup::built()) GTEST_SKIP() << "this build has NCCL";
  EXPECT_FALSE(NcclGroup::available(&why));
  EXPECT_NE(why.find("no NCCL"), std::string::npos) << why;
  EXPECT_THROW(NcclGroup(0, 1, 0, [](const std::vector<uint8_t>& v) { return v; }), std::runtime_error);
}

// Where `ranks` ranks run when rank r takes GPU r % gpus of one machine.
std::vector<std::string> oneMachine(int ranks, int gpus) {
  std::vector<std::string> out;
  for (int r = 0; r < ranks; ++r) out.push_back("a/cuda:" + std::to_string(r % gpus));
  return out;
}

// rank = replica * stages + stage; NCCL refuses two ranks of one communicator on one GPU, so every stage's replicas
// need distinct GPUs, on one machine or several.
TEST(Nccl, PlacementNeedsOneGpuPerReplicaOfAStage) {
  EXPECT_EQ(NcclGroup::placementProblem(4, oneMachine(8, 8)), "");
  EXPECT_EQ(NcclGroup::placementProblem(1, oneMachine(4, 4)), "");
  EXPECT_EQ(NcclGroup::placementProblem(2, oneMachine(4, 3)), "");  // ranks 0,2 -> GPUs 0,2; ranks 1,3 -> GPUs 1,0
  EXPECT_EQ(NcclGroup::placementProblem(4, oneMachine(4, 1)), "");  // no replicas: nothing to reduce
  const std::string one = NcclGroup::placementProblem(4, oneMachine(8, 1));
  EXPECT_NE(one.find("replicas 0 and 1 of stage 0 (ranks 0 and 4) would share a/cuda:0"), std::string::npos) << one;
  const std::string four = NcclGroup::placementProblem(2, oneMachine(6, 4));  // ranks 0,2,4 -> GPUs 0,2,0
  EXPECT_NE(four.find("replicas 0 and 2 of stage 0 (ranks 0 and 4)"), std::string::npos) << four;
  // One GPU on each of two machines: each replica of the one stage has its own, whatever its local number.
  EXPECT_EQ(NcclGroup::placementProblem(1, {"a/0000:3B:00.0", "b/0000:3B:00.0"}), "");
  EXPECT_EQ(NcclGroup::placementProblem(2, {"a/0000:3B:00.0", "a/0000:5E:00.0", "b/0000:3B:00.0", "b/0000:5E:00.0"}),
            "");
}

// The two ends of every link (neighbouring stages of a replica) need distinct GPUs; machines count.
TEST(Nccl, LinkPlacementNeedsNeighbouringStagesOnDistinctGpus) {
  EXPECT_EQ(NcclGroup::linkPlacementProblem(2, {"a/cuda:0", "a/cuda:1"}), "");
  EXPECT_EQ(NcclGroup::linkPlacementProblem(2, {"a/cuda:0", "b/cuda:0"}), "");  // one GPU on each of two machines
  EXPECT_EQ(NcclGroup::linkPlacementProblem(1, {"a/cuda:0", "a/cuda:0"}), "");  // replicas only: no links
  // Rank 1 (the last stage of replica 0) and rank 2 (the first of replica 1) are not neighbours.
  EXPECT_EQ(NcclGroup::linkPlacementProblem(2, {"a/cuda:0", "a/cuda:1", "a/cuda:1", "a/cuda:0"}), "");
  const std::string one = NcclGroup::linkPlacementProblem(2, {"a/cuda:0", "a/cuda:0"});
  EXPECT_NE(one.find("stages 0 and 1 of replica 0 (ranks 0 and 1) would share a/cuda:0"), std::string::npos) << one;
  const std::string later =
      NcclGroup::linkPlacementProblem(3, {"a/cuda:0", "a/cuda:1", "a/cuda:2", "a/cuda:0", "a/cuda:2", "a/cuda:2"});
  EXPECT_NE(later.find("stages 1 and 2 of replica 1 (ranks 4 and 5)"), std::string::npos) << later;
}

}  // namespace
}  // namespace ps
