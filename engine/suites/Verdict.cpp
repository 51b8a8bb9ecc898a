#include "engine/suites/Verdict.h"

#include "engine/suites/SuiteMetrics.h"

#include <cmath>
#include <limits>

namespace ps {
namespace {

// One side of a rule in one seed; `best` picks per seed by the metric's direction.
std::optional<RuleValue> side(const SuiteOperand& o, const std::string& ruleMetric, uint64_t seed,
                              const RuleLookup& lookup, std::vector<int64_t>& runs) {
  const std::string& metric = o.metric.empty() ? ruleMetric : o.metric;
  if (!o.variant.empty()) {
    auto v = lookup(o.variant, seed, metric);
    if (v) runs.push_back(v->run);
    return v;
  }
  const SuiteMetricInfo* info = findSuiteMetric(metric);
  const bool higher = info ? info->higherIsBetter : true;
  std::optional<RuleValue> best;
  for (const auto& name : o.best) {
    auto v = lookup(name, seed, metric);
    if (!v) return std::nullopt;  // the best of an incomplete set is not known
    runs.push_back(v->run);
    if (!best || (higher ? v->value > best->value : v->value < best->value)) best = v;
  }
  return best;
}

}  // namespace

const char* verdictName(VerdictKind k) {
  return k == VerdictKind::Holds ? "holds" : k == VerdictKind::Fails ? "fails" : "inconclusive";
}

Statistic statisticOf(const std::vector<double>& values) {
  Statistic s;
  s.count = int(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / double(values.size());
  if (values.size() > 1 && std::isfinite(s.mean)) {
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(sq / double(values.size() - 1));
  }
  return s;
}

Verdict judge(const SuiteRule& rule, const std::vector<uint64_t>& seeds, const RuleLookup& lookup) {
  Verdict v;
  std::vector<double> lhs, rhs, margins;
  int neverReached = 0, missing = 0;  // seeds where neither side reached the target; seeds lacking a finished run
  for (uint64_t seed : seeds) {
    std::vector<int64_t> runs;
    const auto l = side(rule.lhs, rule.metric, seed, lookup, runs);
    const auto r = side(rule.rhs, rule.metric, seed, lookup, runs);
    if (!l || !r) {
      ++missing;
      continue;
    }
    const double right = rule.scale * r->value + rule.offset;
    const double d = rule.op == ">=" ? l->value - right : right - l->value;
    if (std::isnan(d)) {  // both sides never reached the target: no evidence either way
      ++neverReached;
      continue;
    }
    lhs.push_back(l->value);
    rhs.push_back(right);
    margins.push_back(d);
    v.seeds.push_back(seed);
    v.runs.insert(v.runs.end(), runs.begin(), runs.end());
  }
  v.lhs = statisticOf(lhs);
  v.rhs = statisticOf(rhs);
  v.margin = statisticOf(margins);
  const Statistic& m = v.margin;
  if (m.count == 0) {
    v.why = missing == 0 && neverReached > 0
                ? "neither side reached the target in any seed: no evidence either way"
                : "no seed has finished runs of every variant the rule needs" +
                      (neverReached > 0 ? " (in the " + std::to_string(neverReached) +
                                              " that have, neither side reached the target)"
                                        : std::string());
    return v;
  }
  if (m.count == 1) {
    v.why = "one seed: no spread to judge the margin against; run more seeds (--seeds 3)";
    return v;
  }
  if (!std::isfinite(m.mean)) {
    // Some seed never reached its target: decided only when every seed's margin has the same sign.
    bool allPositive = true, allNegative = true;
    for (double d : margins) allPositive = allPositive && d > 0, allNegative = allNegative && d < 0;
    v.kind = allPositive ? VerdictKind::Holds : allNegative ? VerdictKind::Fails : VerdictKind::Inconclusive;
    v.why = v.kind == VerdictKind::Inconclusive
                ? "seeds disagree, and some never reached the target"
                : "the same in every seed (a target never reached counts as infinitely slow)";
    return v;
  }
  if (std::abs(m.mean) <= 2 * m.sd || m.mean == 0) {
    v.why = "the mean margin is within two standard deviations of zero over " + std::to_string(m.count) + " seeds";
    return v;
  }
  v.kind = m.mean > 0 ? VerdictKind::Holds : VerdictKind::Fails;
  v.why = "the mean margin is more than two standard deviations from zero over " + std::to_string(m.count) + " seeds";
  return v;
}

}  // namespace ps
