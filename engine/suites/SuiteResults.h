#pragma once
// A suite's runs as the store has them: for every variant and seed, the latest finished run whose configuration is
// the planned one (name, tags and notes aside), with its figures; and the rule values read from them.
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Breakeven.h"
#include "engine/suites/SuiteMetrics.h"
#include "engine/suites/SuitePlan.h"
#include "engine/suites/Verdict.h"

#include <map>
#include <optional>

namespace ps {

// The finished and diverged runs of a store by configuration identity (the latest one of each): what a suite counts
// as done. Failed and stopped runs are not results and run again. With `codeVersion`, only runs of that code count.
std::map<std::string, RunInfo> finishedRunsByIdentity(const RunStore& store, const std::string* codeVersion = nullptr);

struct SuiteResults {
  Suite suite;
  SuiteScale scale;
  std::vector<uint64_t> seeds;
  std::vector<PlannedRun> plan;
  std::map<std::string, std::map<uint64_t, RunFigures>> runs;  // variant -> seed -> figures (finished or diverged)
  // A timed suite's first seed, its runs re-timed over bandwidths to the suite's target (unset for other suites, or
  // with `breakeven_why` saying why it could not be made).
  std::optional<BreakevenMap> breakeven;
  std::string breakeven_why;

  // The value of a suite metric for one run, targets resolved against the same seed's reference variant.
  std::optional<double> value(const std::string& variant, uint64_t seed, const std::string& metric) const;
  RuleLookup lookup() const;
  std::vector<Verdict> verdicts() const;  // one per rule, in order
  int missing() const;                    // planned runs without a finished run
  // The target the time- and bytes-to-target metrics wait for in this seed; nullopt without the reference run.
  std::optional<double> target(uint64_t seed) const;
};

// The latest result of every planned run, whatever code made it (the report lists the code versions and warns when
// they differ).
SuiteResults collectSuiteResults(const RunStore& store, const Suite& suite, int seeds, const SuiteScale& scale);

}  // namespace ps
