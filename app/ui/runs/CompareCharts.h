#pragma once
// What the compare view draws, as plain functions of RunSeries: the list of charts, each run's line on a chart,
// the loss-versus-bytes (Pareto) figures and the CSV of the visible range. No widgets here, so the numbers can
// be tested on their own.
#include "app/ui/runs/RunSeries.h"

#include <QPointF>
#include <QString>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ps::ui {

struct CompareChart {
  enum class Kind { Line, Pareto };
  QString title, yLabel;
  Kind kind = Kind::Line;
  std::vector<std::string> keys;  // exact metric keys (a line chart's first present key is drawn)
  std::string linkSuffix;         // or, when set: the mean over every "link<b>" + linkSuffix key at each step
  double scale = 1;               // drawn values are the recorded ones times this (seconds drawn as ms)
};

// The charts for a set of runs: eval accuracy where any run is a classifier, eval perplexity where any is a
// language model (both for a mix), compression error per direction, and the Pareto scatter last.
std::vector<CompareChart> compareCharts(const std::vector<const RunSeries*>& runs);

// The metric keys a chart reads from one run (every link's key for a mean chart; empty when it has none).
std::vector<std::string> chartKeys(const CompareChart& chart, const RunSeries& run);
// One run's line on a line chart, x on `axis`, in step order (empty when the run has no such metric).
std::vector<QPointF> chartLine(const CompareChart& chart, const RunSeries& run, XAxis axis);

// Pareto view: the run's final point (total wire bytes, final eval loss), or nothing without eval loss, and its
// path there (cumulative wire bytes, eval loss) at every evaluation.
std::optional<QPointF> paretoPoint(const RunSeries& run);
std::vector<QPointF> paretoCurve(const RunSeries& run);

// Long-format CSV "run_id,run_name,key,step,x,value" of the raw (unsmoothed) points each line chart shows inside
// its x range (nullopt: everything). Returns an error message, or empty on success.
struct CsvChart {
  const CompareChart* chart = nullptr;
  std::optional<std::pair<double, double>> range;
};
QString writeVisibleCsv(const QString& path, const std::vector<CsvChart>& charts,
                        const std::vector<const RunSeries*>& runs, XAxis axis);

}  // namespace ps::ui
