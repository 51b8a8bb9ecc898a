#pragma once
// The metrics a suite's rules and report can name, computed from a finished run in the store: its summary figures,
// averages over its steps, and how long (emulated seconds) and how many wire bytes it took to reach a target.
#include "engine/runs/store/RunStore.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct SuiteMetricInfo {
  std::string name, label, unit;
  bool higherIsBetter = true;
  bool percent = false;  // a fraction shown as percent (accuracies)
};

const std::vector<SuiteMetricInfo>& suiteMetrics();
const SuiteMetricInfo* findSuiteMetric(const std::string& name);  // null when unknown
std::string suiteMetricNames();                                   // "a, b, c" for error messages

// What one finished run contributed, read once from the store.
struct RunFigures {
  int64_t run_id = 0;
  std::string status, code_version, name;
  nlohmann::json summary;
  std::map<std::string, double> values;  // the summary metrics and the step averages
  // Evaluations in step order: (step, emulated seconds, cumulative wire bytes, value of the curve metric), one list
  // per evaluated metric key ("eval/accuracy", "eval/perplexity", ...).
  struct Point {
    int64_t step;
    double emulated_s, wire_bytes, value;
  };
  std::map<std::string, std::vector<Point>> curves;

  std::optional<double> value(const std::string& metric) const;
  // Emulated seconds and wire bytes when `key` (an eval metric) first reaches `target`, linear between evaluations;
  // nullopt when it never does.
  std::optional<std::pair<double, double>> reach(const std::string& key, double target, bool higherIsBetter) const;
};

// A diverged run's quality figures (evaluations, training loss) are the worst values: accuracy 0, loss +inf.
RunFigures loadRunFigures(const RunStore& store, const RunInfo& run);

// The eval metric key behind a summary metric ("eval_accuracy" -> "eval/accuracy", "_uncompressed" kept).
std::string evalKeyOf(const std::string& metric);
// The other way: the summary metric with the final value of a stored eval curve ("eval/accuracy" is the compressed
// evaluation: "eval_accuracy_compressed"), and a short label for charts ("Test accuracy (%)").
std::string summaryMetricOf(const std::string& evalKey);
std::string curveLabel(const std::string& evalKey);

}  // namespace ps
