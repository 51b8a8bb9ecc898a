#pragma once
// For tests of multi-process code with its ranks as threads of this process: runs body(rank) on `world` threads, each
// with the same loopback rendezvous port, and gives back each rank's error ("" where it returned).
#include "engine/dist/Cluster.h"

#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ps::test {

inline std::vector<std::string> onRankThreads(int world, const std::function<void(const ClusterOptions&)>& body,
                                              double timeout_s = 20) {
  ClusterOptions o;
  o.world = world;
  o.master_port = freeLoopbackPort();
  o.timeout_s = timeout_s;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        ClusterOptions mine = o;
        mine.rank = r;
        body(mine);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace ps::test
