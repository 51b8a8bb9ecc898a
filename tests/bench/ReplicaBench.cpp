// The replicas' all-reduce, as the gradient exchange runs it every step: the run's own mesh of link streams
// (engine/dist/ReplicaMesh.h) against Gloo's all-reduce on the same loopback, in one run of this program, for 2 and
// 4 replicas (threads of this process) and gradients of 1 Ki to 4 Mi floats.
//   bench_replicas [--rounds N]
// Prints per case the median time of one all-reduce (of `rounds` timed, after three untimed) and mesh / Gloo.
#include "engine/dist/ReplicaMesh.h"
#include "tests/bench/BenchArgs.h"
#include "tests/engine/dist/ShareBoard.h"

#include <c10/util/intrusive_ptr.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> t) {
  std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
  return t[t.size() / 2];
}

// Runs `members` threads; each makes its member with `make(i)` and all-reduces `count` floats `3 + rounds` times
// with `reduce`. Returns member 0's median milliseconds per all-reduce over the timed rounds.
template <typename Member>
double timeRounds(int members, int64_t count, int rounds, const std::function<Member(int)>& make,
                  const std::function<void(Member&, float*, int64_t)>& reduce) {
  std::vector<double> times;
  std::vector<std::thread> threads;
  for (int i = 0; i < members; ++i)
    threads.emplace_back([&, i] {
      Member m = make(i);
      std::vector<float> data(size_t(count), float(i + 1));
      for (int r = 0; r < 3 + rounds; ++r) {
        const auto t0 = Clock::now();
        reduce(m, data.data(), count);
        if (i == 0 && r >= 3) times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    });
  for (auto& t : threads) t.join();
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The replicas' all-reduce: the run's mesh of link streams against Gloo's, on loopback");
  int rounds = 30;
  ps::bench::addCount(app, "--rounds", rounds, "timed all-reduces per case (the median is kept)");
  ps::bench::parse(app, argc, argv);
  torch::set_num_threads(1);
  std::printf("%-9s %10s %12s %12s %12s\n", "replicas", "floats", "mesh ms", "gloo ms", "mesh/gloo");
  for (int members : {2, 4}) {
    for (int64_t count : {int64_t(1) << 10, int64_t(1) << 18, int64_t(1) << 22}) {
      ps::Board board;
      using Mesh = std::shared_ptr<ps::ReplicaMesh>;
      const double mesh = timeRounds<Mesh>(
          members, count, rounds,
          [&](int i) {
            return std::make_shared<ps::ReplicaMesh>(
                i, members, "bench", "127.0.0.1", "token", 120, [](int j) { return "replica " + std::to_string(j); },
                board.share());
          },
          [](Mesh& m, float* data, int64_t n) { m->allReduce(data, n); });
      auto store = c10::make_intrusive<c10d::HashStore>();
      using Group = c10::intrusive_ptr<c10d::ProcessGroupGloo>;
      const double gloo = timeRounds<Group>(
          members, count, rounds,
          [&](int i) {
            auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(120));
            options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
            options->threads = 1;
            return c10::make_intrusive<c10d::ProcessGroupGloo>(store, i, members, options);
          },
          [](Group& g, float* data, int64_t n) {
            std::vector<at::Tensor> t{torch::from_blob(data, {n}, torch::kFloat32)};
            g->allreduce(t)->wait();
          });
      std::printf("%-9d %10lld %12.3f %12.3f %12.2f\n", members, (long long)count, mesh, gloo, mesh / gloo);
      std::fflush(stdout);
    }
  }
  return 0;
}
