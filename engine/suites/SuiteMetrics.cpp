#include "engine/suites/SuiteMetrics.h"
#include "engine/core/Metrics.h"
#include "engine/core/RunSummary.h"

#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/store/Reach.h"

#include <cmath>
#include <limits>

namespace ps {

const std::vector<SuiteMetricInfo>& suiteMetrics() {
  static const std::vector<SuiteMetricInfo> all = {
      {summary_key::kEvalAccuracy, "test accuracy (as evaluated: compression.inference)", "", true, true},
      {"eval_accuracy_compressed", "test accuracy, compressed evaluation", "", true, true},
      {"eval_accuracy_uncompressed", "test accuracy, uncompressed evaluation", "", true, true},
      {summary_key::kEvalLoss, "test loss", "", false},
      {"eval_loss_compressed", "test loss, compressed evaluation", "", false},
      {"eval_loss_uncompressed", "test loss, uncompressed evaluation", "", false},
      {summary_key::kEvalPerplexity, "test perplexity", "", false},
      {"eval_perplexity_compressed", "test perplexity, compressed evaluation", "", false},
      {"eval_perplexity_uncompressed", "test perplexity, uncompressed evaluation", "", false},
      {summary_key::kTrainLoss, "training loss (last 50 steps)", "", false},
      {summary_key::kBytesWire, "wire bytes, all links", "B", false},
      {summary_key::kEmulatedSeconds, "emulated training time", "s", false},
      {summary_key::kWallSeconds, "wall time", "s", false},
      {"codec_ms_per_step", "codec time per step (encode + decode, all links)", "ms", false},
      {"time_to_target", "emulated time to the target", "s", false},
      {"bytes_to_target", "wire bytes to the target", "B", false},
  };
  return all;
}

const SuiteMetricInfo* findSuiteMetric(const std::string& name) {
  for (const auto& m : suiteMetrics())
    if (m.name == name) return &m;
  return nullptr;
}

std::string suiteMetricNames() {
  std::string out;
  for (const auto& m : suiteMetrics()) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

std::string evalKeyOf(const std::string& metric) {
  std::string key = metric;
  const std::string compressed =
      summary_key::kCompressed;  // the store keeps compressed evaluations under the plain key
  if (key.size() > compressed.size() && key.compare(key.size() - compressed.size(), std::string::npos, compressed) == 0)
    key.erase(key.size() - compressed.size());
  return key.rfind("eval_", 0) == 0 ? "eval/" + key.substr(5) : key;
}

std::string summaryMetricOf(const std::string& evalKey) {
  std::string m = evalKey.rfind("eval/", 0) == 0 ? "eval_" + evalKey.substr(5) : evalKey;
  const std::string plain = summary_key::kUncompressed;
  const bool uncompressed =
      m.size() > plain.size() && m.compare(m.size() - plain.size(), std::string::npos, plain) == 0;
  return uncompressed ? m : m + summary_key::kCompressed;
}

std::string curveLabel(const std::string& evalKey) {
  std::string what = evalKey.rfind("eval/", 0) == 0 ? evalKey.substr(5) : evalKey;
  const std::string plain = summary_key::kUncompressed;
  const bool uncompressed =
      what.size() > plain.size() && what.compare(what.size() - plain.size(), std::string::npos, plain) == 0;
  if (uncompressed) what.erase(what.size() - plain.size());
  std::string label = "Test " + what + (what == "accuracy" ? " (%)" : "");
  return uncompressed ? label + ", uncompressed evaluation" : label;
}

std::optional<double> RunFigures::value(const std::string& metric) const {
  const auto it = values.find(metric);
  if (it == values.end() || std::isnan(it->second)) return std::nullopt;  // +-inf pass: a diverged run's worst
  return it->second;
}

std::optional<std::pair<double, double>> RunFigures::reach(const std::string& key, double target,
                                                           bool higherIsBetter) const {
  const auto it = curves.find(key);
  if (it == curves.end()) return std::nullopt;
  const auto r = ps::reach(it->second, target, higherIsBetter, [](const Point& p) { return p.value; });
  if (!r) return std::nullopt;
  return std::make_pair(r->read([](const Point& p) { return p.emulated_s; }),
                        r->read([](const Point& p) { return p.wire_bytes; }));
}

RunFigures loadRunFigures(const RunStore& store, const RunInfo& run) {
  RunFigures f;
  f.run_id = run.id;
  f.status = run.status;
  f.code_version = run.code_version;
  f.name = run.name;
  f.summary =
      run.summary_json.empty() ? nlohmann::json::object() : parseJsonOrDiscarded(run.summary_json);
  if (f.summary.is_discarded() || !f.summary.is_object()) f.summary = nlohmann::json::object();
  for (const auto& m : suiteMetrics()) {
    const auto it = f.summary.find(m.name);
    if (it != f.summary.end() && it->is_number()) f.values[m.name] = it->get<double>();
  }
  // Step averages and the cumulative wire bytes each evaluation was reached with.
  // Metrics come by step, then key: a step's "bytes/wire" precedes the "eval/..." taken after that step.
  double codec = 0, wire = 0;
  int64_t steps = 0;
  for (const auto& p : store.metrics(run.id)) {
    if (p.key == metric::kCodecSeconds)
      codec += p.value, ++steps;
    else if (p.key == metric::kWireBytes)
      wire += p.value;
    else if (p.key.rfind("eval/", 0) == 0)
      f.curves[p.key].push_back({p.step, p.emulated_s, wire, p.value});
  }
  if (steps > 0) f.values["codec_ms_per_step"] = 1000.0 * codec / double(steps);
  if (run.status == run_status::kDiverged) {
    // It has no final evaluation (the summary holds the last one before the loss blew up): the model it left is
    // worth nothing, so its quality figures are the worst there are.
    for (const auto& m : suiteMetrics())
      if (m.name.rfind("eval_", 0) == 0 || m.name == summary_key::kTrainLoss)
        f.values[m.name] = m.higherIsBetter ? (m.percent ? 0.0 : -std::numeric_limits<double>::infinity())
                                            : std::numeric_limits<double>::infinity();
  }
  return f;
}

}  // namespace ps
