#pragma once
// How the benchmarks time a piece of work on the host clock.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace ps::bench {

// The median of `reps` timings of `f` in milliseconds, after one untimed call (caches, allocator, kernels). `wait`,
// when given, runs before and after each timing: what waits for work `f` queued elsewhere (a GPU's stream).
inline double medianMs(int reps, const std::function<void()>& f, const std::function<void()>& wait = {}) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    if (wait) wait();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    if (wait) wait();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
  return t[t.size() / 2];
}

}  // namespace ps::bench
