#pragma once
// For tests of "declared sizes are checked before allocating": caps how much more address space the calling process
// may take, so an allocation sized by a hostile header fails with bad_alloc instead of succeeding slowly. Call it in a
// death-test child (EXPECT_EXIT) so the cap ends with the child.
#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace ps::test {

inline void limitMemoryGrowth(uint64_t bytes) {
  std::ifstream status("/proc/self/status");
  std::string line;
  uint64_t vmKb = 0;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) vmKb = std::stoull(line.substr(7));
  const rlim_t cap = rlim_t(vmKb * 1024 + bytes);
  rlimit limit{cap, cap};
  setrlimit(RLIMIT_AS, &limit);
}

}  // namespace ps::test
