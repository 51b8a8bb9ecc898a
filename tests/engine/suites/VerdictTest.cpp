#include "engine/suites/SuiteResults.h"
#include "engine/suites/Verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace ps {
namespace {

// Values per (variant, seed) for one metric; run ids are 100 * seed + index of the variant.
struct Table {
  std::map<std::pair<std::string, uint64_t>, double> values;
  RuleLookup lookup(const std::string& wantMetric = "eval_accuracy") const {
    return
        [this, wantMetric](const std::string& v, uint64_t seed, const std::string& metric) -> std::optional<RuleValue> {
          if (metric != wantMetric) return std::nullopt;
          const auto it = values.find({v, seed});
          if (it == values.end()) return std::nullopt;
          return RuleValue{it->second, int64_t(100 * seed + v.size())};
        };
  }
};

SuiteRule rule(const std::string& lhs, const std::string& op, const std::string& rhs, double offset = 0,
               double scale = 1) {
  SuiteRule r;
  r.metric = "eval_accuracy";
  r.lhs.variant = lhs;
  r.rhs.variant = rhs;
  r.op = op;
  r.offset = offset;
  r.scale = scale;
  return r;
}

TEST(Verdict, HoldsFailsOrIsInconclusiveByTwoStandardDeviationsOfTheMargins) {
  Table t;
  // a beats b by 2, 3 and 2.5 points: margin 2.5 +- 0.5, far from zero.
  t.values = {{{"a", 1}, 0.90}, {{"b", 1}, 0.88},  {{"a", 2}, 0.91},
              {{"b", 2}, 0.88}, {{"a", 3}, 0.905}, {{"b", 3}, 0.88}};
  auto v = judge(rule("a", ">=", "b"), {1, 2, 3}, t.lookup());
  EXPECT_EQ(v.kind, VerdictKind::Holds) << v.why;
  EXPECT_NEAR(v.margin.mean, 0.025, 1e-12);
  EXPECT_NEAR(v.margin.sd, 0.005, 1e-12);
  EXPECT_EQ(v.seeds.size(), 3u);
  EXPECT_EQ(v.runs.size(), 6u);
  EXPECT_EQ(judge(rule("b", ">=", "a"), {1, 2, 3}, t.lookup()).kind, VerdictKind::Fails);
  // "a beats b by at least 3 points": margins -1, 0, -0.5 -> mean -0.5, sd 0.5: within two sd of zero.
  v = judge(rule("a", ">=", "b", 0.03), {1, 2, 3}, t.lookup());
  EXPECT_EQ(v.kind, VerdictKind::Inconclusive) << v.why;
  EXPECT_NE(v.why.find("two standard deviations"), std::string::npos);
  // "<=" turns the margin around; scale multiplies the right side.
  EXPECT_EQ(judge(rule("b", "<=", "a", -0.01), {1, 2, 3}, t.lookup()).kind, VerdictKind::Holds);
  EXPECT_EQ(judge(rule("a", "<=", "b", 0, 0.9), {1, 2, 3}, t.lookup()).kind, VerdictKind::Fails);
}

TEST(Verdict, OneSeedIsAlwaysInconclusiveAndMissingRunsAreSkipped) {
  Table t;
  t.values = {{{"a", 1}, 0.99}, {{"b", 1}, 0.10}, {{"a", 2}, 0.99}};  // seed 2 lacks b
  auto v = judge(rule("a", ">=", "b"), {1, 2}, t.lookup());
  EXPECT_EQ(v.kind, VerdictKind::Inconclusive);
  EXPECT_EQ(v.margin.count, 1);
  EXPECT_NE(v.why.find("one seed"), std::string::npos) << v.why;
  v = judge(rule("a", ">=", "c"), {1, 2}, t.lookup());
  EXPECT_EQ(v.kind, VerdictKind::Inconclusive);
  EXPECT_EQ(v.margin.count, 0);
}

TEST(Verdict, BestOfSeveralPicksByTheMetricsDirectionPerSeed) {
  Table t;
  t.values = {{{"g", 1}, 100},  {{"s1", 1}, 120}, {{"s2", 1}, 90},  {{"g", 2}, 80}, {{"s1", 2}, 85},
              {{"s2", 2}, 110}, {{"g", 3}, 90},   {{"s1", 3}, 140}, {{"s2", 3}, 95}};
  SuiteRule r = rule("g", "<=", "");
  r.metric = "time_to_target";  // lower is better: best = the smaller time of s1 and s2 in each seed
  r.rhs.variant.clear();
  r.rhs.best = {"s1", "s2"};
  auto v = judge(r, {1, 2, 3}, t.lookup("time_to_target"));
  EXPECT_NEAR(v.rhs.mean, (90 + 85 + 95) / 3.0, 1e-9);
  EXPECT_NEAR(v.margin.mean, (-10 + 5 + 5) / 3.0, 1e-9);
  EXPECT_EQ(v.kind, VerdictKind::Inconclusive);
  r.metric = "eval_accuracy";  // higher is better: best = the larger
  auto w = judge(r, {1}, t.lookup("eval_accuracy"));
  EXPECT_NEAR(w.rhs.mean, 120, 1e-9);
}

TEST(Verdict, ATargetNeverReachedCountsAsInfinitelySlow) {
  Table t;
  const double inf = std::numeric_limits<double>::infinity();
  t.values = {{{"g", 1}, 50}, {{"s", 1}, inf}, {{"g", 2}, 70}, {{"s", 2}, inf}};
  SuiteRule r = rule("g", "<=", "s");
  r.metric = "time_to_target";
  EXPECT_EQ(judge(r, {1, 2}, t.lookup("time_to_target")).kind, VerdictKind::Holds);
  t.values[{"s", 2}] = 60;  // the seeds disagree
  EXPECT_EQ(judge(r, {1, 2}, t.lookup("time_to_target")).kind, VerdictKind::Inconclusive);
  // A seed where neither side reached the target is no evidence at all: it is left out, not counted as a tie.
  t.values = {{{"g", 1}, inf}, {{"s", 1}, inf}, {{"g", 2}, 50}, {{"s", 2}, 90}, {{"g", 3}, 52}, {{"s", 3}, 91}};
  const auto v = judge(r, {1, 2, 3}, t.lookup("time_to_target"));
  EXPECT_EQ(v.margin.count, 2);
  EXPECT_NEAR(v.margin.mean, 39.5, 1e-9);
  EXPECT_EQ(v.kind, VerdictKind::Holds) << v.why;
}

// When every seed's runs finished but neither side ever reached the target, the report must say so, not that runs
// are missing (which sends the user to run again what is already there).
TEST(Verdict, NeitherSideReachingTheTargetIsSaidAsSuchNotAsMissingRuns) {
  Table t;
  const double inf = std::numeric_limits<double>::infinity();
  t.values = {{{"g", 1}, inf}, {{"s", 1}, inf}};
  SuiteRule r = rule("g", "<=", "s");
  r.metric = "time_to_target";
  const auto v = judge(r, {1}, t.lookup("time_to_target"));
  EXPECT_EQ(v.kind, VerdictKind::Inconclusive);
  EXPECT_NE(v.why.find("neither side reached the target"), std::string::npos) << v.why;
  t.values.erase({"s", 1});  // now a run is missing
  EXPECT_NE(judge(r, {1}, t.lookup("time_to_target")).why.find("no seed has finished runs"), std::string::npos);
  // One seed lacks a run, the other never reached the target: the missing run is what to act on.
  t.values = {{{"g", 1}, inf}, {{"s", 1}, inf}, {{"g", 2}, 50}};
  const auto w = judge(r, {1, 2}, t.lookup("time_to_target"));
  EXPECT_NE(w.why.find("no seed has finished runs"), std::string::npos) << w.why;
  EXPECT_NE(w.why.find("neither side reached the target"), std::string::npos) << w.why;
}

TEST(SuiteResults, TimeToTargetWaitsForAFractionOfTheReferenceRunOfTheSameSeed) {
  SuiteResults r;
  r.suite.name = "s";
  r.suite.variants = {{"dense", "dense", {}}, {"fast", "fast", {}}};
  r.suite.target.fraction = 0.9;
  r.seeds = {1};
  RunFigures dense, fast;
  dense.run_id = 1;
  dense.values["eval_accuracy"] = 0.8;  // target: 0.72
  dense.curves["eval/accuracy"] = {{100, 10, 1e6, 0.6}, {200, 20, 2e6, 0.8}};
  fast.run_id = 2;
  fast.values["eval_accuracy"] = 0.75;
  fast.curves["eval/accuracy"] = {{100, 4, 1e5, 0.64}, {200, 8, 2e5, 0.80}};
  r.runs["dense"][1] = dense;
  r.runs["fast"][1] = fast;
  EXPECT_NEAR(*r.target(1), 0.72, 1e-12);
  EXPECT_NEAR(*r.value("dense", 1, "time_to_target"), 10 + 10 * 0.6, 1e-9);  // linear between evaluations
  EXPECT_NEAR(*r.value("fast", 1, "time_to_target"), 4 + 4 * 0.5, 1e-9);
  EXPECT_NEAR(*r.value("fast", 1, "bytes_to_target"), 1e5 + 1e5 * 0.5, 1e-3);
  r.runs["fast"][1].curves["eval/accuracy"] = {{100, 4, 1e5, 0.5}};
  EXPECT_TRUE(std::isinf(*r.value("fast", 1, "time_to_target")));
  EXPECT_FALSE(r.value("fast", 2, "time_to_target")) << "no run for seed 2";
  EXPECT_EQ(*r.value("fast", 1, "eval_accuracy"), 0.75);
}

}  // namespace
}  // namespace ps
