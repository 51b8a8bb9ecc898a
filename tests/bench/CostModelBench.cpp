// The planner's cost model against trained runs, every point printed: six settings of its grid on 2 and 4 stages at
// 10 and 100 Mbit/s (tests/engine/session/CostModelPoints.h says how each side is measured). The prediction comes from
// the dense profile and the setting's message costs; the baseline is the setting's own runs, measured in the same
// process between the profiles they are compared with. The test of the same points holds each to a quarter, since a
// CI machine's noise moves single points by up to a fifth; here, on a quiet machine, the goal is every point within
// 10%. Prints a table, the count within 10%, the median and largest error, and one JSON array.
//
//   bench_cost_model [--runs 5] [--steps 10] [--json FILE]
#include "tests/bench/BenchArgs.h"
#include "tests/engine/session/CostModelPoints.h"

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int runs = 5, steps = 10;
  std::string jsonPath;
  CLI::App app{"The planner's cost model against trained runs, every point"};
  ps::bench::addCount(app, "--runs", runs, "runs a side (their median is compared)");
  ps::bench::addCount(app, "--steps", steps, "steps a run (the median of those after the first is its step)");
  app.add_option("--json", jsonPath, "also write the numbers to this file");
  ps::bench::parse(app, argc, argv);

  std::printf("bench_cost_model: smoke preset 512 wide, %d runs a side of %d steps\n", runs, steps);
  std::printf("%-7s %-10s %-38s %12s %12s %8s\n", "stages", "bandwidth", "setting", "predicted", "measured", "error");
  nlohmann::json out = nlohmann::json::array();
  std::vector<double> errors;
  int within = 0;
  for (const auto& p : ps::cost_model::points(runs, steps)) {
    const double error = p.predicted_s / p.measured_s - 1;
    errors.push_back(std::abs(error));
    within += std::abs(error) <= 0.10;
    std::printf("%-7d %-10s %-38s %9.3f ms %9.3f ms %+7.1f%%\n", p.stages,
                (nlohmann::json(p.bandwidth_mbps).dump() + " Mb/s").c_str(), p.setting.c_str(), 1000 * p.predicted_s,
                1000 * p.measured_s, 100 * error);
    std::fflush(stdout);
    out.push_back({{"stages", p.stages},
                   {"bandwidth_mbps", p.bandwidth_mbps},
                   {"setting", p.setting},
                   {"predicted_step_s", p.predicted_s},
                   {"measured_step_s", p.measured_s},
                   {"error", error}});
  }
  double largest = 0;
  for (double e : errors) largest = std::max(largest, e);
  std::printf("\n%d of %zu points within 10%%; median error %.1f%%, largest %.1f%%\n", within, errors.size(),
              100 * ps::cost_model::lowerMedian(errors), 100 * largest);
  std::printf("%s\n", out.dump().c_str());
  if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  return 0;
}
