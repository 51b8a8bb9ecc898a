#include "engine/suites/Verdict.h"

#include "engine/suites/Significance.h"
#include "engine/suites/SuiteMetrics.h"

#include <cmath>
#include <cstdio>
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

namespace {

std::string pText(double p) {
  char t[32];
  std::snprintf(t, sizeof t, p < 0.001 ? "p < 0.001" : "p = %.3f", p);
  return t;
}

// The t-test over finite margins: decides with three seeds or more.
void decideByT(Verdict& v) {
  const Statistic& m = v.margin;
  const TTest t = pairedTTest(m.mean, m.sd, m.count);
  v.test = VerdictTest::PairedT;
  v.p = t.p;
  v.ciLow = t.ciLow;
  v.ciHigh = t.ciHigh;
  const std::string over = " over " + std::to_string(m.count) + " seeds";
  if (m.count < 3) {
    v.why = "two seeds: a paired t-test decides from three (run --seeds 3)";
  } else if (t.p < kVerdictAlpha) {
    v.kind = m.mean > 0 ? VerdictKind::Holds : VerdictKind::Fails;
    v.why = "paired t-test" + over + ": " + pText(t.p) + ", the 95% interval of the mean margin excludes zero";
    return;
  } else {
    v.why = "paired t-test" + over + ": " + pText(t.p) + ", the 95% interval of the mean margin includes zero";
  }
  const auto need = seedsToDecide(m.mean, m.sd);
  v.seedsToDecide = need ? *need : 0;
  v.why += need ? "; at this spread about " + std::to_string(*need) + " seeds would decide it"
                : "; at this spread no feasible number of seeds would decide it";
}

// The sign test, when some margin is only a bound: every seed whose sign is known counts once.
void decideBySign(Verdict& v, int positive, int negative) {
  v.test = VerdictTest::Sign;
  v.p = signTestTwoSidedP(positive, negative);
  const int need = signTestSeedsToDecide();
  v.why = std::to_string(v.censored) + (v.censored == 1 ? " seed" : " seeds") +
          " never reached the target (time capped at the run's end), so an exact sign test decides: " +
          std::to_string(positive) + " positive, " + std::to_string(negative) + " negative" +
          (v.signUnknown ? ", " + std::to_string(v.signUnknown) + " unknown" : std::string()) + ", " + pText(v.p);
  if (v.p < kVerdictAlpha) {
    v.kind = positive > negative ? VerdictKind::Holds : VerdictKind::Fails;
    return;
  }
  v.seedsToDecide = need;
  v.why += "; it decides at 95% only with " + std::to_string(need) + " or more seeds that agree";
}

}  // namespace

Verdict judge(const SuiteRule& rule, const std::vector<uint64_t>& seeds, const RuleLookup& lookup) {
  Verdict v;
  v.oracle = !rule.lhs.best.empty() || !rule.rhs.best.empty();
  std::vector<double> lhs, rhs, margins;
  int neverReached = 0, missing = 0;  // seeds where neither side reached the target; seeds lacking a finished run
  int positive = 0, negative = 0;     // signs known for the sign test
  const double sense = rule.op == ">=" ? 1 : -1;
  for (uint64_t seed : seeds) {
    std::vector<int64_t> runs;
    const auto l = side(rule.lhs, rule.metric, seed, lookup, runs);
    const auto r = side(rule.rhs, rule.metric, seed, lookup, runs);
    if (!l || !r) {
      ++missing;
      continue;
    }
    if (l->censored && r->censored) {  // neither side reached the target: no evidence either way
      ++neverReached;
      continue;
    }
    const double right = rule.scale * r->value + rule.offset;
    const double d = sense * (l->value - right);
    if (std::isnan(d)) {  // two uncapped infinities
      ++neverReached;
      continue;
    }
    // A censored side's true value lies above its cap, which moves the true margin one way: the sign is known only
    // when the capped margin already points that way.
    int sign = d > 0 ? 1 : d < 0 ? -1 : 0;
    if (l->censored || r->censored) {
      ++v.censored;
      v.lhsCensored = v.lhsCensored || l->censored;
      v.rhsCensored = v.rhsCensored || r->censored;
      const double towards = l->censored ? sense : -sense * rule.scale;  // d's change as the censored side grows
      if (!(towards > 0 ? d >= 0 : d <= 0)) sign = 0, ++v.signUnknown;
      else if (sign == 0) sign = towards > 0 ? 1 : -1;
    }
    positive += sign > 0;
    negative += sign < 0;
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
  if (v.censored > 0 || !std::isfinite(m.mean)) {
    decideBySign(v, positive, negative);
    return v;
  }
  if (m.count == 1) {
    v.why = "one seed: no spread to judge the margin against; run more seeds (--seeds 3)";
    return v;
  }
  decideByT(v);
  return v;
}

void adjustAcrossRules(std::vector<Verdict>& verdicts) {
  std::vector<double> p;
  for (const auto& v : verdicts) p.push_back(v.p);
  const auto adjusted = holmAdjusted(p);
  for (size_t i = 0; i < verdicts.size(); ++i) verdicts[i].holmP = adjusted[i];
}

}  // namespace ps
