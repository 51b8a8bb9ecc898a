#pragma once
// The compression planner, whole: profiles a configuration uncompressed, measures a grid of codec settings on each
// link direction (bytes and error on its own tensors, times in short runs of each setting), weighs each by what
// finished runs in a store say about its accuracy (or, without such runs, by its error), and searches the assignment
// with the least predicted time to the target (engine/plan). What `pipesqueeze-cli plan` prints and the app's
// Run ▸ Plan for This Network… shows; docs/planner.md says how it decides.
#include "engine/core/LinkModel.h"
#include "engine/plan/PlanSearch.h"
#include "engine/session/PlanProfile.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

struct PlanRequest {
  nlohmann::json preset;            // the configuration to plan for, its network included (its compression is replaced)
  std::string name = "the preset";  // how messages name it
  double accuracy_budget = 1;       // points of final accuracy against dense, summed over the directions' choices
  double error_budget = 0.1;        // the most relative error a setting no finished run vouches for may have
  // Predicted times within this fraction of the fastest are a tie the cost model cannot decide (its step-time ratios
  // matched measured ones within 3-5%); the tie goes to the plan resting least on error alone.
  double tie_tolerance = 0.03;
  std::string store;                // run store whose finished runs are the evidence; "" or no such file: none
  int steps = 30, samples = 4;      // uncompressed steps to profile; messages per direction to measure codecs on
};

struct PlannedDirection {
  LinkDirection direction;
  std::string setting;       // "topk k=0.1 feedback=ef": the method, then the options the grid sets
  nlohmann::json spec;       // those options, as a preset writes them
  CandidateMeasure measure;  // its bytes and error on the direction's tensors, its codec times in a run
  nlohmann::json evidence;   // "dense", the ids of the runs behind its accuracy, or "error only"
  // AQ-SGD: the share of the steps to the target that send float32 (its first epochs, before a sample's second
  // visit), at which the search costs its messages as dense's; 0 for every other setting.
  double float32_share = 0;
  // Every setting of the grid as measured on this direction, and whether the search could take it ("offered", "over
  // the error budget", "its runs never reached the target"): what a plan was chosen from.
  struct Considered {
    std::string setting;
    CandidateMeasure measure;
    std::string verdict;
    double float32_share = 0;
  };
  std::vector<Considered> considered;
};

struct PlanOutcome {
  nlohmann::json planned;  // the preset with a setting per boundary and direction, tagged "planned"; it loads
  std::vector<PlannedDirection> directions;
  plan::Plan best, dense;
  std::optional<plan::Plan> uniform;  // the best setting used on every direction, where one is feasible
  std::string uniform_setting;
  LinkModel network;
  double accuracy_budget = 0, error_budget = 0, tie_tolerance = 0, seconds = 0;
  // Every figure, as `pipesqueeze-cli plan --json` prints them.
  nlohmann::json toJson() const;
};

// Asked between the planner's runs with what it is doing and how far it is ("measuring quantize bits=4", 3, 16);
// returning false stops it (planLinks then throws PlanCancelled).
using PlanProgress = std::function<bool(const std::string& what, int done, int total)>;

struct PlanCancelled : std::runtime_error {
  PlanCancelled() : std::runtime_error("planning cancelled") {}
};

// Throws ConfigError for a configuration that cannot be planned (one stage, invalid) and what the profile and the
// search throw (std::invalid_argument where no assignment is within the budget).
PlanOutcome planLinks(const PlanRequest& request, const PlanProgress& progress = {});

}  // namespace ps
