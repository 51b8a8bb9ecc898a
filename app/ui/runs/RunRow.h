#pragma once
// ps::ui::RunRow: what the runs table shows for one run, read once per refresh from the store: the run's record,
// its parsed config and summary, and a few figures taken from its metrics (best eval, and for a running run the
// latest loss, steps and bytes, since its summary is written only when it ends).
#include "engine/runs/store/RunFilter.h"
#include "engine/runs/store/RunStore.h"

#include <QString>
#include <QVariant>

#include <limits>
#include <nlohmann/json.hpp>

namespace ps::ui {

// The runs table's columns, in their default order.
// clang-format off
enum class RunColumn {
  Visible, Id, Name, Status, Tags, Notes, Created, Task, Stages, Microbatches, Schedule,
  FwdMethod, FwdK, FwdBits, FwdFeedback, BwdMethod, BwdK, BwdBits, BwdFeedback,
  Bandwidth, Latency, Lr, Steps, TrainLoss, EvalLoss, EvalMetric, BestEvalMetric,
  WireBytes, Ratio, WallTime, TimeToTarget, Count
};
// clang-format on
constexpr int kRunColumnCount = int(RunColumn::Count);

QString runColumnTitle(RunColumn column);
QString runColumnToolTip(RunColumn column);

struct RunRow {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  RunInfo info;
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json summary = nlohmann::json::object();
  // The compression settings as the run ended: `config` with every mid-run change of a compression key applied.
  nlohmann::json finalConfig = nlohmann::json::object();
  bool languageModel = false;  // eval figure is perplexity (lower is better) rather than accuracy

  // From the metrics (NaN where there are none).
  double bestEval = kNone;
  double lastEvalLoss = kNone, lastEvalMetric = kNone, lastTrainLoss = kNone;
  double lastStep = kNone, lastWall = kNone, rawBytes = kNone, wireBytes = kNone;
  // What the runs filter reads (the record's facts, with the figures above while the run has no summary).
  RunFacts facts;

  // Reads the run's figures. `previous` (the same run at the last refresh, or null) lets a finished run skip the
  // metric queries: its figures cannot change any more. Throws StoreError.
  static RunRow read(const RunStore& store, const RunInfo& info, const RunRow* previous);
  // A run being prepared, not yet in a store: id 0, status "starting", named as the session will name it.
  static RunRow starting(const nlohmann::json& config);

  // The typed value of a column: a double for numbers, a QString for text, invalid where there is none.
  // This is the sort value (a setting as the run started); display() is the text shown, "topk → quantize" for a
  // setting changed mid-run.
  QVariant value(RunColumn column) const;
  QString display(RunColumn column) const;

 private:
  void readFacts(const RunRow* previous);
  QVariant recordValue(RunColumn column) const;
  QVariant settingValue(RunColumn column) const;
  QVariant directionSetting(const nlohmann::json& config, RunColumn column) const;  // invalid outside those columns
  QString format(RunColumn column, const QVariant& value) const;
  QVariant resultValue(RunColumn column) const;
  double summaryNumber(const char* key, double fallback) const;
};

}  // namespace ps::ui
