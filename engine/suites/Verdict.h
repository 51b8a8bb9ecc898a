#pragma once
// Judging a suite's rule across seeds. For every seed that has all the runs a rule needs, the margin
//   d = lhs - (scale * rhs + offset)   for ">="      d = (scale * rhs + offset) - lhs   for "<="
// is positive when the rule holds in that seed. Over the seeds: "holds" when the mean margin is positive and more
// than two standard deviations of the margins from zero, "fails" when negative and as far, "inconclusive" otherwise,
// and always with a single seed (there is no spread to judge against). A side that never reached its target counts
// as infinitely slow; a seed where neither side reached it is no evidence and is left out.
#include "engine/suites/Suite.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ps {

enum class VerdictKind { Holds, Fails, Inconclusive };
const char* verdictName(VerdictKind k);

struct Statistic {
  int count = 0;
  double mean = 0, sd = 0;  // sd with n - 1; 0 for one value. Infinite means pass through.
};
Statistic statisticOf(const std::vector<double>& values);

struct Verdict {
  VerdictKind kind = VerdictKind::Inconclusive;
  std::string why;              // in words, for the report
  Statistic lhs, rhs, margin;   // rhs already scaled and offset
  std::vector<uint64_t> seeds;  // the seeds judged
  std::vector<int64_t> runs;    // every run the rule read
};

// What a rule reads: the value of `metric` for `variant` in `seed`, and the run it came from (nullopt: no finished
// run, or the metric is undefined for it, e.g. a target never reached is +inf, not nullopt).
struct RuleValue {
  double value;
  int64_t run;
};
using RuleLookup =
    std::function<std::optional<RuleValue>(const std::string& variant, uint64_t seed, const std::string& metric)>;

Verdict judge(const SuiteRule& rule, const std::vector<uint64_t>& seeds, const RuleLookup& lookup);

}  // namespace ps
