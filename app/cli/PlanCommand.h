#pragma once
// pipesqueeze-cli plan: what each link direction of a preset should send on a given network. Profiles the preset
// uncompressed, measures a grid of codec settings on each direction's own tensors, weighs each by what finished runs
// in the store say about its accuracy (or, without such runs, by its measured error), and searches the assignment
// with the least predicted time to the target (engine/plan, engine/session/PlanProfile.h).
//   plan --preset P [--bandwidth MBPS] [--latency MS] [--egress stage|link] [--accuracy-budget POINTS]
//        [--error-budget E] [--store FILE] [--steps N] [--samples M] [-o FILE] [--json] [--set KEY=VALUE]...
#include <CLI/App.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ps::cli {

struct PlanOptions {
  std::string preset, store, output, egress;
  std::vector<std::string> sets;
  std::optional<double> bandwidth, latency;
  double accuracyBudget = 1;  // points of final accuracy against dense, summed over the directions' choices
  double errorBudget = 0.1;   // the most relative error a setting without run evidence may have
  double tieTolerance = 0.03;  // predicted times this close to the fastest tie (PlanRequest::tie_tolerance)
  int steps = 30, samples = 4;
  bool json = false;
};

void addPlanCommand(CLI::App& app, PlanOptions& options);
// Exit code: 0 planned, 2 bad input (raised as exceptions).
int runPlan(const PlanOptions& options);

}  // namespace ps::cli
