#pragma once
// Judging a suite's rule across seeds. For every seed that has all the runs a rule needs, the margin
//   d = lhs - (scale * rhs + offset)   for ">="      d = (scale * rhs + offset) - lhs   for "<="
// is positive when the rule holds in that seed. The margins are paired by seed, and a paired one-sample t-test of
// "the mean margin is zero" decides at 95% two-sided: "holds" when it rejects zero with a positive mean, "fails" with
// a negative one, "inconclusive" otherwise and always with fewer than three seeds. A side that never reached its
// target is censored: its time (or bytes) is capped at its run's end, so the margin is only a bound, and the rule is
// decided by an exact sign test instead, which needs six seeds that agree. A seed where neither side reached the
// target is no evidence and is left out. Across a suite's rules, SuiteResults adds Holm-adjusted p-values.
#include "engine/suites/Suite.h"

#include <functional>
#include <limits>
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

enum class VerdictTest { None, PairedT, Sign };

struct Verdict {
  VerdictKind kind = VerdictKind::Inconclusive;
  std::string why;              // in words, for the report
  Statistic lhs, rhs, margin;   // rhs already scaled and offset; censored values enter at their cap
  std::vector<uint64_t> seeds;  // the seeds judged
  std::vector<int64_t> runs;    // every run the rule read
  VerdictTest test = VerdictTest::None;
  double p = std::numeric_limits<double>::quiet_NaN();       // two-sided p of `test`
  double holmP = std::numeric_limits<double>::quiet_NaN();   // Holm-adjusted across the suite's rules
  double ciLow = std::numeric_limits<double>::quiet_NaN();   // 95% confidence interval of the mean margin (t-test)
  double ciHigh = std::numeric_limits<double>::quiet_NaN();
  int censored = 0;          // seeds where one side never reached the target (its value is its run's end)
  int signUnknown = 0;       // of those, seeds whose margin's sign the cap cannot tell (left out of the sign test)
  int seedsToDecide = 0;     // inconclusive: seeds that would decide at the observed spread (0: none within 1000)
  bool oracle = false;       // a side is the best of several variants, picked per seed after the fact
  bool lhsCensored = false, rhsCensored = false;  // some seed's value of that side is a cap ("> T")
};

// What a rule reads: the value of `metric` for `variant` in `seed`, and the run it came from (nullopt: no finished
// run, or the metric is undefined for it). A target never reached is censored: `value` is the run's end (its
// emulated seconds or wire bytes), a lower bound of the unknown value; without a known end it is +inf.
struct RuleValue {
  double value;
  int64_t run;
  bool censored = false;
};
using RuleLookup =
    std::function<std::optional<RuleValue>(const std::string& variant, uint64_t seed, const std::string& metric)>;

Verdict judge(const SuiteRule& rule, const std::vector<uint64_t>& seeds, const RuleLookup& lookup);

// Sets every verdict's holmP from the p-values of the rules that have one (a suite's rules are one family).
void adjustAcrossRules(std::vector<Verdict>& verdicts);

}  // namespace ps
