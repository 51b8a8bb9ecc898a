// The planner's search on a problem the size of a real one: a 4-stage 1F1B step of 8 micro-batches (6 link
// directions) and per direction a grid of settings like the catalogue's (TopK and RandK at six densities with and
// without error feedback, quantization at five widths in two scale modes, PowerSGD at four ranks, half precision
// and float32: 40 options, 4.1e9 assignments). Costs, steps factors and accuracy costs are synthetic but shaped as
// measured ones are (encode time grows with what a codec keeps, error shrinks with it); the search does not care
// where they come from. Baseline: enumerating every assignment, projected from the time of one replay measured in
// the same run. Printed per network and accuracy budget: replays, seconds, whether the plan is proved optimal, and
// the projected enumeration against the search.
//
//   bench_plan_search [--bandwidths 10,100,1000,10000] [--budgets 0.5,1,2]
#include "engine/plan/PlanSearch.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/BenchTiming.h"
#include "tests/engine/core/PipelineTraces.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace ps;

namespace {

std::vector<plan::Option> grid(double denseBytes) {
  const double second_per_byte = 0.25e-9;  // a pass over float32 at 4 GB/s
  std::vector<plan::Option> out;
  out.push_back({"none", {0, 0, denseBytes}, 1, 0});
  out.push_back({"half", {denseBytes * second_per_byte, denseBytes * second_per_byte, denseBytes / 2}, 1, 0.02});
  for (const char* method : {"topk", "randk"})
    for (double k : {0.01, 0.02, 0.05, 0.1, 0.2, 0.3})
      for (bool ef : {false, true}) {
        const bool rand = method[0] == 'r';
        const double loss = (rand ? 3.0 : 1.0) * 0.4 * std::sqrt(0.1 / k) * (ef ? 0.5 : 1);
        out.push_back({std::string(method) + " k=" + std::to_string(k) + (ef ? " ef" : ""),
                       {denseBytes * second_per_byte * (rand ? 1.5 : 4 + 2 * ef), denseBytes * second_per_byte * k * 2,
                        denseBytes * k * 2},
                       1 + 0.2 * loss,
                       loss});
      }
  for (int bits : {2, 3, 4, 6, 8})
    for (bool symmetric : {false, true}) {
      const double loss = 2.0 / double(1 << bits) * 4 * (symmetric ? 1.2 : 1);
      out.push_back({"quantize bits=" + std::to_string(bits) + (symmetric ? " symmetric" : ""),
                     {denseBytes * second_per_byte * 2, denseBytes * second_per_byte, denseBytes * bits / 32 * 1.01},
                     1 + 0.1 * loss,
                     loss});
    }
  for (int rank : {1, 2, 4, 8}) {
    const double loss = 1.5 / rank;
    out.push_back(
        {"powersgd rank=" + std::to_string(rank),
         {denseBytes * second_per_byte * 3 * rank, denseBytes * second_per_byte * rank, denseBytes * rank / 64},
         1 + 0.3 * loss,
         loss});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> bandwidths{"10", "100", "1000", "10000"}, budgets{"0.5", "1", "2"};
  CLI::App app{"The planner's branch and bound against projected enumeration"};
  bench::addList(app, "--bandwidths", bandwidths, "networks, Mbit/s");
  bench::addList(app, "--budgets", budgets, "accuracy budgets, points");
  bench::parse(app, argc, argv);

  test::Shape shape;
  shape.oneFOneB = true;
  shape.bytes = shape.dense = 1 << 20;
  shape.forward = 0.004, shape.backward = 0.008, shape.update = 0.002;
  plan::Problem problem;
  problem.profiled = test::pipelineTrace(shape);
  problem.directions = plan::directionsOf(problem.profiled);
  problem.options.assign(problem.directions.size(), grid(double(shape.dense)));
  double assignments = 1;
  for (const auto& o : problem.options) assignments *= double(o.size());
  std::printf("%zu directions x %zu options: %.3g assignments\n", problem.directions.size(), problem.options[0].size(),
              assignments);
  std::printf("%10s %7s %10s %9s %8s %14s %10s\n", "Mbit/s", "budget", "replays", "seconds", "optimal", "enumerate (s)",
              "speed-up");
  for (const auto& b : bandwidths)
    for (const auto& budget : budgets) {
      problem.network = LinkModel{std::stod(b), 0.5};
      problem.accuracy_budget = std::stod(budget);
      const double replayMs = bench::medianMs(
          51, [&] { (void)plan::evaluate(problem, std::vector<size_t>(problem.directions.size(), 0)); });
      const auto t0 = std::chrono::steady_clock::now();
      const plan::Plan p = plan::search(problem);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double enumerate = assignments * replayMs / 1000;
      std::printf("%10s %7s %10zu %9.3f %8s %14.3g %10.3g\n", b.c_str(), budget.c_str(), p.evaluated, s,
                  p.optimal ? "yes" : "no", enumerate, enumerate / s);
    }
  return 0;
}
