#include "engine/suites/SuiteResults.h"

#include "engine/core/RunSummary.h"
#include "engine/runs/config/BoundedJson.h"

#include <cmath>
#include <limits>

namespace ps {

std::map<std::string, RunInfo> finishedRunsByIdentity(const RunStore& store, const std::string* codeVersion) {
  std::map<std::string, RunInfo> out;
  for (auto& run : store.listRuns()) {  // newest first: the first seen of an identity is the latest
    if (!run_status::isResult(run.status)) continue;  // a divergence is a result too
    if (codeVersion && run.code_version != *codeVersion) continue;
    const auto config = parseJsonOrDiscarded(run.config_json);
    if (config.is_discarded()) continue;
    out.emplace(configIdentity(config), std::move(run));
  }
  return out;
}

SuiteResults collectSuiteResults(const RunStore& store, const Suite& suite, int seeds, const SuiteScale& scale) {
  SuiteResults r;
  r.suite = suite;
  r.scale = scale;
  r.plan = planSuite(suite, seeds, scale);  // refuses an oversized grid before anything is made of it
  r.seeds = suite.seedList(seeds);
  const auto finished = finishedRunsByIdentity(store);
  for (const auto& p : r.plan) {
    const auto it = finished.find(p.identity);
    if (it != finished.end()) r.runs[p.variant][p.seed] = loadRunFigures(store, it->second);
  }
  if (suite.timed && !r.seeds.empty()) {  // the first seed's runs, in the order of the variants
    const uint64_t seed = r.seeds.front();
    std::vector<int64_t> ids;
    for (const auto& v : suite.variants) {
      const auto runs = r.runs.find(v.name);
      if (runs == r.runs.end()) continue;
      const auto run = runs->second.find(seed);
      if (run != runs->second.end()) ids.push_back(run->second.run_id);
    }
    const auto target = r.target(seed);
    if (ids.empty() || !target) {
      r.breakeven_why = "seed " + std::to_string(seed) + " has no finished run of " +
                        (ids.empty() ? std::string("any variant") : suite.targetOf() + ", which sets the target");
    } else {
      BreakevenOptions o;
      o.target = *target;
      try {
        r.breakeven = breakevenMap(store, ids, o);
      } catch (const std::exception& e) {  // a run without traces: the report says so and stands without the map
        r.breakeven_why = e.what();
      }
    }
  }
  return r;
}

int SuiteResults::missing() const {
  int n = 0;
  for (const auto& p : plan) {
    const auto v = runs.find(p.variant);
    n += v == runs.end() || !v->second.count(p.seed);
  }
  return n;
}

std::optional<double> SuiteResults::target(uint64_t seed) const {
  const auto v = runs.find(suite.targetOf());
  if (v == runs.end()) return std::nullopt;
  const auto s = v->second.find(seed);
  if (s == v->second.end()) return std::nullopt;
  const auto reference = s->second.value(suite.target.metric);
  if (!reference) return std::nullopt;
  const SuiteMetricInfo* info = findSuiteMetric(suite.target.metric);
  return info && info->higherIsBetter ? *reference * suite.target.fraction : *reference / suite.target.fraction;
}

namespace {

// For the metrics read at the suite's target (the emulated time or the wire bytes at which a run reached it): the
// run-end figure a never-reached target is capped at. nullptr for every other metric.
const char* cappedAt(const std::string& metric) {
  if (metric == "time_to_target") return summary_key::kEmulatedSeconds;
  if (metric == "bytes_to_target") return summary_key::kBytesWire;
  return nullptr;
}

}  // namespace

std::optional<double> SuiteResults::value(const std::string& variant, uint64_t seed, const std::string& metric) const {
  const auto v = runs.find(variant);
  if (v == runs.end()) return std::nullopt;
  const auto s = v->second.find(seed);
  if (s == v->second.end()) return std::nullopt;
  const RunFigures& f = s->second;
  if (!cappedAt(metric)) return f.value(metric);
  const auto goal = target(seed);
  if (!goal) return std::nullopt;
  const SuiteMetricInfo* info = findSuiteMetric(suite.target.metric);
  const auto reached = f.reach(evalKeyOf(suite.target.metric), *goal, info ? info->higherIsBetter : true);
  if (!reached) return std::numeric_limits<double>::infinity();  // never reached: infinitely slow
  return metric == "time_to_target" ? reached->first : reached->second;
}

RuleLookup SuiteResults::lookup() const {
  return [this](const std::string& variant, uint64_t seed, const std::string& metric) -> std::optional<RuleValue> {
    const auto v = value(variant, seed, metric);
    if (!v) return std::nullopt;
    const RunFigures& run = runs.at(variant).at(seed);
    const char* capped = cappedAt(metric);
    if (!capped || !std::isinf(*v)) return RuleValue{*v, run.run_id};  // a diverged loss stays +inf
    // A target never reached: censored at the run's end, the most the run can say ("> T").
    const auto end = run.value(capped);
    return RuleValue{end ? *end : *v, run.run_id, true};
  };
}

std::vector<Verdict> SuiteResults::verdicts() const {
  std::vector<Verdict> out;
  const auto look = lookup();
  for (const auto& rule : suite.rules) out.push_back(judge(rule, seeds, look));
  adjustAcrossRules(out);
  return out;
}

}  // namespace ps
