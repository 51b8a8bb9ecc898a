#pragma once
// What the benchmarks share on their command lines: `--sizes 1,16,64`, a comma-separated list of sizes (each
// benchmark says in what unit). A bad item throws std::invalid_argument (std::stoll).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ps::bench {

inline std::vector<int64_t> sizeList(const std::string& text) {
  std::vector<int64_t> out;
  for (size_t p = 0; p <= text.size();) {
    const size_t q = std::min(text.find(',', p), text.size());
    out.push_back(std::stoll(text.substr(p, q - p)));
    p = q + 1;
  }
  return out;
}

}  // namespace ps::bench
