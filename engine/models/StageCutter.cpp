#include "engine/models/StageCutter.h"

#include "engine/errors/ConfigError.h"

#include <algorithm>
#include <limits>

namespace ps {

std::vector<size_t> balanceCuts(const std::vector<double>& costs, int stages) {
  const size_t n = costs.size();
  if (stages < 1 || size_t(stages) > n)
    throw ConfigError("pipeline.stages = " + std::to_string(stages) + " but the model has " + std::to_string(n) +
                      " blocks; use at most " + std::to_string(n) + " stages or a deeper model (model.depth)");
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][i]: minimal max-cost of splitting blocks [0, i) into s stages; from[s][i]: start of the last stage.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(stages + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s)
    for (size_t i = s; i <= n; ++i)
      for (size_t j = s - 1; j < i; ++j) {
        double cost = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        if (cost < best[s][i]) {
          best[s][i] = cost;
          from[s][i] = j;
        }
      }
  std::vector<size_t> starts(stages);
  size_t end = n;
  for (int s = stages; s >= 1; --s) {
    starts[s - 1] = from[s][end];
    end = starts[s - 1];
  }
  return starts;
}

std::vector<size_t> explicitCuts(const std::vector<int>& cuts, size_t blocks, int stages) {
  if (cuts.size() != size_t(stages - 1))
    throw ConfigError("pipeline.cuts needs " + std::to_string(stages - 1) + " entries for " + std::to_string(stages) +
                      " stages");
  std::vector<size_t> starts{0};
  for (int c : cuts) {
    if (c <= int(starts.back()) || size_t(c) >= blocks)
      throw ConfigError("pipeline.cuts entry " + std::to_string(c) + " is not allowed: cuts must increase and lie in 1.." +
                        std::to_string(blocks - 1) + " (the model has " + std::to_string(blocks) + " blocks)");
    starts.push_back(size_t(c));
  }
  return starts;
}

}  // namespace ps
