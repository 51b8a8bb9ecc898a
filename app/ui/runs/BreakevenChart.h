#pragma once
// ps::ui::BreakevenChart: when compression pays, for the runs compared. Every run re-timed for bandwidths from 1 Mbit/s
// to 10 Gbit/s (engine/runs/trace/Breakeven.h): time to the compare view's target on y, bandwidth on a log x axis, a
// line per run (or per seed group: its mean, with the min-max band), and a labelled marker where a compressed run and
// an uncompressed one trade places. Runs that never reach the target, or that saved no step traces, are named below
// the chart, never dropped silently. Computed when shown (a map re-times every run a few dozen times).
#include "app/ui/runs/RunNames.h"
#include "app/ui/runs/RunSeries.h"
#include "engine/runs/trace/Breakeven.h"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;

namespace ps::ui {

class PlotWidget;

class BreakevenChart : public QWidget {
  Q_OBJECT
 public:
  explicit BreakevenChart(QWidget* parent = nullptr);

  // `target`: an accuracy in percent (85 = 85%) or, for language models, a perplexity, as the time-to-target table
  // takes it. `network`: the latency, framing and egress to keep at every bandwidth (its bandwidth is not used).
  void setRuns(std::shared_ptr<ps::RunStore> store, std::vector<const RunSeries*> runs, RunNames names, double target,
               bool languageModels, const RetimeNetwork& network, bool groupSeeds);

  PlotWidget* plot() const { return plot_; }
  const std::optional<BreakevenMap>& map() const { return map_; }
  QString summary() const;  // what the text under the chart says
  void refresh();           // computes the map now, shown or not

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void draw();

  std::shared_ptr<ps::RunStore> store_;
  std::vector<const RunSeries*> runs_;
  RunNames names_;
  BreakevenOptions options_;
  bool groupSeeds_ = false;
  bool stale_ = false;
  QString key_;  // what the map was asked for, to skip asking again
  std::optional<BreakevenMap> map_;
  QStringList notes_;  // runs left out or not reaching the target, and the crossings
  PlotWidget* plot_;
  QLabel* summary_;
};

}  // namespace ps::ui
