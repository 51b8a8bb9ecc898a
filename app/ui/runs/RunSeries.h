#pragma once
// ps::ui::RunSeries: one run's metrics and events in memory, shaped for charts. The live view fills it from
// telemetry (through RunStoreSink's key names) and the compare view loads it from the run store, so both draw
// the same keys the same way.
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"

#include <QPointF>
#include <QString>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ps::ui {

// What a compare chart puts on its x axis. Bytes is cumulative wire bytes sent up to and including the step.
enum class XAxis { Step = 0, WallTime = 1, EmulatedTime = 2, Bytes = 3 };
QString xAxisLabel(XAxis axis);

struct SeriesPoint {
  int64_t step = 0;
  double value = 0, wall_s = 0, emulated_s = 0;
};

// A setting changed during a run (its "setting" event).
struct SettingChange {
  int64_t step = 0;
  std::string key;  // dotted, as in the config: compression.forward.k
  nlohmann::json to;
};

struct RunSeries {
  RunInfo info;                                    // id 0 for a live run not yet in a store
  nlohmann::json config = nlohmann::json::object();  // parsed info.config_json
  std::map<std::string, std::vector<SeriesPoint>> metrics;  // key -> points in step order
  std::vector<EventRow> events;
  std::vector<TraceRow> traces;  // every step's trace: what re-timing the run for another network needs

  // Re-times the emulated time axis for another network (engine/runs/trace/Retime.h): emulatedOf() then answers at
  // that network. An empty network, or a run without traces (saved before they were kept), keeps the recorded
  // times; false for the latter. Throws TraceError for a damaged trace.
  bool retime(const RetimeNetwork& network);
  bool retimed() const { return retimed_.has_value(); }
  // The point's emulated time: at the network of the last retime(), else as recorded.
  double emulatedOf(const SeriesPoint& p) const;

  // Appends a metric point (steps must not go backwards within a key). "bytes/wire" also advances the
  // cumulative byte count used by XAxis::Bytes.
  void append(const MetricPoint& point);
  void appendEvent(const EventRow& event);

  // Cumulative wire bytes sent by the end of `step` (0 before the first step).
  double bytesAt(int64_t step) const;
  double xOf(const SeriesPoint& p, XAxis axis) const;
  // The key's points as (x, value); empty when the run has no such key.
  std::vector<QPointF> points(const std::string& key, XAxis axis) const;
  // Markers for the run's mid-run changes ("setting" events, plus pause/resume/reset): x on `axis` and a label
  // such as "fwd k = 0.05".
  std::vector<std::pair<double, QString>> markers(XAxis axis) const;
  bool has(const std::string& key) const { return metrics.count(key) != 0; }
  // The run's mid-run setting changes, in step order.
  std::vector<SettingChange> settingChanges() const;
  // The run's task is a language model (evaluated by perplexity), by its config, else by what it recorded.
  bool isLanguageModel() const;

  static RunSeries load(const RunStore& store, int64_t runId);  // throws StoreError for an unknown id

 private:
  std::vector<std::pair<int64_t, double>> cumulativeBytes_;  // (step, total wire bytes so far)
  std::optional<RetimedRun> retimed_;                        // at the network of the last retime()
};

// A short label for a setting event's detail: "fwd k = 5 %" for compression.forward.k (see compactKey).
QString compactKey(QString key);
// A setting's value as the runs table writes it: K as a percentage ("5 %"), "no limit" where the setting's 0 means
// none, strings without quotes, numbers in their shortest form.
QString settingText(const QString& key, const nlohmann::json& value);
QString settingLabel(const std::string& kind, const std::string& detailJson);

}  // namespace ps::ui
