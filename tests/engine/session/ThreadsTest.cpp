// How the engine shares this machine's cores: idle OpenMP workers give theirs back.
#include "engine/session/Threads.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

namespace ps {
namespace {

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// A stage computes while the driver thread's team, done with its last parallel region, waits for the next. With
// LLVM's OpenMP runtime the team's workers spun on sched_yield for 200 ms after each region by default, taking
// CPU from the stages beside them (a third of a 4-stage run's processor time).
TEST(Threads, AnIdleOpenMpTeamLeavesTheCoresToTheStages) {
  configureThreads(2, 1);
  at::set_num_threads(2);
  std::atomic<int64_t> sum{0};
  at::parallel_for(0, 1 << 16, 1, [&](int64_t begin, int64_t end) { sum += end - begin; });
  ASSERT_EQ(sum.load(), 1 << 16);
  const double before = processCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const double idle = processCpuSeconds() - before;
  EXPECT_LT(idle, 0.03) << "CPU seconds the process used while all of its threads had nothing to do";
}

}  // namespace
}  // namespace ps
