#pragma once
// The compression planner's cost model and search: which codec setting each link direction of a pipeline should use
// on a given network.
//
// Cost model. A profiled step (the preset's, run uncompressed) is replayed with each link direction's messages
// costing what a candidate setting costs there: its mean encode and decode time and its wire size, measured on that
// direction's own tensors. The replay is the one that re-times saved runs (engine/core/StepTrace.h), so pipelining,
// a shared egress, TCP framing and latency all count, and the profiled network gives the profiled step to the bit.
//
// Objective. The time to a target: the predicted step time x the steps the settings need relative to dense. A
// setting's steps factor and accuracy cost come from the caller's evidence (finished runs, or the measured error
// where there are none). How settings on several directions combine is an assumption stated here once: the assignment
// needs the steps of its slowest-converging choice (the largest factor), and its accuracy costs add up (a
// conservative bound). An assignment is feasible when its accuracy cost stays within the budget.
//
// Search. Every assignment (searchExhaustive: the reference), or branch and bound (search): options another option of
// the same direction beats in every respect are dropped, and partial assignments are bounded below by replaying the
// open directions at their cheapest costs, which no completion can beat because the replay is monotone in every
// message's times and size. It is exact unless it reaches its replay limit, and says which. Both are deterministic:
// ties keep the earlier option.
//
// Ties within the model's error. Predictions closer together than the cost model can tell apart (tie_tolerance, a
// fraction of the fastest) are not a reason to take an unproven setting: among the feasible assignments predicted
// within it, the plan is the one that rests least on error alone (the least sum of its choices' risk: the measured
// error of each choice no finished run vouches for), then the fastest. A second search finds it, bounded the same
// way (its own bound: the risk its choices so far carry plus the least risk the open directions can add).
//
// Torch-free: the planner's measurements happen elsewhere; this is arithmetic on a trace.
#include "engine/core/Timeline.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ps::plan {

// The link directions a step's messages use, by boundary, forward before backward.
std::vector<LinkDirection> directionsOf(const StepTrace& step);

struct Option {
  std::string setting;       // what the plan writes for the direction, e.g. "quantize bits=4"
  MessageCost cost;          // per message, measured on the direction's tensors (engine/core/Timeline.h)
  double steps_factor = 1;   // steps to the target relative to dense
  double accuracy_cost = 0;  // points of final accuracy lost against dense
  double risk = 0;           // what the choice rests on without run evidence (its relative error); 0 where runs vouch
};

struct Problem {
  StepTrace profiled;  // the step whose schedule and compute the plan keeps
  LinkModel network;   // where the plan will run
  std::vector<LinkDirection> directions;
  std::vector<std::vector<Option>> options;  // per direction, at least one each
  double accuracy_budget = 1;                // points
  double tie_tolerance = 0;                  // predictions within this fraction of the fastest count as equal
  // Throws std::invalid_argument naming what is wrong (no directions, a direction without options, sizes that
  // differ, a direction the step does not use, a negative or non-finite figure).
  void check() const;
};

struct Plan {
  std::vector<size_t> choice;  // per direction: an index into its options
  double step_s = 0;           // predicted
  double steps_factor = 1;
  double accuracy_cost = 0;
  double risk = 0;        // summed over its choices
  bool feasible = false;  // accuracy_cost within the budget
  // The search proved its answer: no feasible assignment has less time to target, or (with a tie tolerance) none
  // within the tolerance of the fastest rests on less error. False when its replay limit stopped it first.
  bool optimal = false;
  size_t evaluated = 0;   // replays the search made (assignments and bounds)
  // The least time factor of any feasible assignment (the search's): this plan's own unless a tie within the
  // tolerance went to a plan resting less on error alone.
  double fastest = 0;
  double time_factor() const { return step_s * steps_factor; }  // the objective: time to target / dense's steps
};

// One assignment, replayed.
Plan evaluate(const Problem& problem, const std::vector<size_t>& choice);

// The assignments that give every direction one same setting (options matched by their names): one per setting the
// first direction has that every direction has, in the first direction's order.
std::vector<std::vector<size_t>> uniformChoices(const Problem& problem);

// The feasible one of those with the least time to target (what a plan is held against), or none.
std::optional<Plan> bestUniform(const Problem& problem);

// The feasible assignment with the least time to target (of those within the tie tolerance of it, the one with the
// least risk), trying every one (twice with a tolerance: the fastest, then the least risk within it); throws
// std::invalid_argument when there are more than `limit` assignments or none is feasible.
Plan searchExhaustive(const Problem& problem, size_t limit = 1000000);

// The same by branch and bound, within `limit` replays: the optimum (Plan::optimal), or the best plan found when the
// limit stops it first; throws std::invalid_argument when no feasible assignment is found.
Plan search(const Problem& problem, size_t limit = 2000000);

}  // namespace ps::plan
