#include "engine/plan/Evidence.h"

#include "engine/core/Metrics.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/RunLabels.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ps::plan {

namespace {

using nlohmann::json;

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Differences that do not change what a run learns from: its seed, and the network it was timed on.
bool ignored(const std::string& key) {
  return key == "train.seed" || startsWith(key, "link.");
}

std::string text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

struct Curve {
  double final_value = 0;
  std::vector<MetricPoint> points;
};

// The run's evaluations of `metric` (finite ones), or nothing where it has none.
std::optional<Curve> curveOf(const RunStore& store, int64_t id, const std::string& metric) {
  Curve c;
  for (auto& m : store.metrics(id, metric))
    if (m.key == metric && std::isfinite(m.value)) c.points.push_back(std::move(m));
  if (c.points.empty()) return std::nullopt;
  c.final_value = c.points.back().value;
  return c;
}

// The first step whose evaluation reaches the target (at or above it, or for a perplexity at or below it).
std::optional<double> stepsTo(const Curve& c, double target, bool higherIsBetter) {
  for (const auto& p : c.points)
    if (higherIsBetter ? p.value >= target : p.value <= target) return double(p.step);
  return std::nullopt;
}

}  // namespace

const char* trafficName(Traffic t) {
  return t == Traffic::Activations ? "activations" : "gradients";
}

const Evidence* EvidenceSet::find(Traffic traffic, const std::string& setting) const {
  for (const auto& e : settings)
    if (e.traffic == traffic && e.setting == setting) return &e;
  return nullptr;
}

std::optional<std::string> settingOf(const json& dense, const json& config, Traffic* traffic) {
  std::vector<std::string> changes;
  for (auto& key : trainingChanges(dense, config))
    if (!ignored(key)) changes.push_back(std::move(key));
  if (changes.empty()) return std::string();
  for (const Traffic t : {Traffic::Activations, Traffic::Gradients}) {
    const std::string prefix = t == Traffic::Activations ? "compression.forward." : "compression.backward.";
    if (!std::all_of(changes.begin(), changes.end(), [&](const std::string& k) { return startsWith(k, prefix); }))
      continue;
    std::string setting;
    for (const auto& key : changes)
      setting += (setting.empty() ? "" : ", ") + key.substr(prefix.size()) + "=" + text(configValueOrNull(config, key));
    if (traffic) *traffic = t;
    return setting;
  }
  return std::nullopt;
}

EvidenceSet gatherEvidence(const RunStore& store, const json& denseConfig, double fraction) {
  EvidenceSet out;
  const bool perplexity = denseConfig.value("task", std::string()) == "brown_lm";
  out.metric = perplexity ? metric::kEvalPerplexity : metric::kEvalAccuracy;
  struct Found {
    Traffic traffic;
    std::string setting;
    int64_t id;
    Curve curve;
  };
  std::vector<Found> compressed;
  std::vector<Curve> dense;
  for (const auto& info : store.listRuns()) {
    if (info.status != "finished") continue;
    json config;
    try {
      config = json::parse(info.config_json);
    } catch (const json::exception&) {
      continue;  // settings that cannot be read say nothing
    }
    Traffic traffic = Traffic::Activations;
    const auto setting = settingOf(denseConfig, config, &traffic);
    if (!setting) continue;
    auto curve = curveOf(store, info.id, out.metric);
    if (!curve) continue;
    if (setting->empty()) {
      out.dense.push_back(info.id);
      dense.push_back(std::move(*curve));
    } else {
      compressed.push_back({traffic, *setting, info.id, std::move(*curve)});
    }
  }
  if (dense.empty()) return out;
  std::sort(out.dense.begin(), out.dense.end());
  std::vector<double> finals, denseSteps;
  for (const auto& c : dense) finals.push_back(c.final_value);
  out.dense_final = mean(finals);
  out.target = perplexity ? out.dense_final / fraction : fraction * out.dense_final;
  bool denseReaches = true;
  for (const auto& c : dense) {
    const auto s = stepsTo(c, out.target, !perplexity);
    denseReaches = denseReaches && s && *s > 0;
    if (s) denseSteps.push_back(*s);
  }
  if (denseReaches) out.dense_steps = mean(denseSteps);
  std::map<std::pair<int, std::string>, std::vector<const Found*>> groups;
  for (const auto& f : compressed) groups[{int(f.traffic), f.setting}].push_back(&f);
  for (const auto& [key, runs] : groups) {
    Evidence e;
    e.traffic = Traffic(key.first);
    e.setting = key.second;
    std::vector<double> values, steps;
    bool reached = denseReaches;
    for (const Found* f : runs) {
      e.runs.push_back(f->id);
      values.push_back(f->curve.final_value);
      const auto s = stepsTo(f->curve, out.target, !perplexity);
      reached = reached && s.has_value();
      if (s) steps.push_back(*s);
    }
    std::sort(e.runs.begin(), e.runs.end());
    e.final_value = mean(values);
    e.accuracy_cost =
        perplexity ? 100 * (e.final_value / out.dense_final - 1) : 100 * (out.dense_final - e.final_value);
    if (reached) e.steps_factor = mean(steps) / out.dense_steps;
    out.settings.push_back(std::move(e));
  }
  return out;
}

}  // namespace ps::plan
