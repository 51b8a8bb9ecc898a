#pragma once
// ps::ui::LivePanel: the charts of the run in progress. Telemetry arrives as value structs (from SessionBridge's
// queued signals) and is kept in full by the charts (the run store has it all too); they are fed from a pending
// buffer on one ~30 Hz timer, so the redraw rate stays steady however fast steps arrive, and each chart decimates when
// it paints.
//
// Frame budget: on a machine where training keeps every core busy, painting competes with it. The timer's interval
// is paced so that chart painting takes at most kPaintBudget (10%) of one core: 30 Hz when painting is cheap (a fast
// machine, a small window), fewer redraws per second when it is not (about 10 Hz on a 2-core machine training the
// 4-stage preset in a 1600 x 1000 window, bench_gui), never less than 2 per second.
#include "app/ui/TelemetryTypes.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/RunSeries.h"
#include "app/ui/runs/TimelineView.h"
#include "engine/telemetry/Charts.h"

#include <QHash>
#include <QTimer>
#include <QWidget>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

class QGridLayout;
class QTabWidget;

namespace ps::ui {

class PlotWidget;
class HeatmapWidget;

class LivePanel : public QWidget {
  Q_OBJECT
 public:
  explicit LivePanel(QWidget* parent = nullptr);

  // Clears everything and lays out the charts for a run of this config (accuracy or perplexity, one heatmap
  // per stage).
  void reset(const nlohmann::json& config);

  // Rebuilds a saved run in this layout, read-only: every chart, heatmap and marker from what the store holds.
  // Returns why it could not (the panel is then unchanged), empty on success.
  QString showStoredRun(const ps::RunStore& store, int64_t id);
  // The saved run shown, or none while the panel follows a live run.
  const std::optional<ps::RunInfo>& storedRun() const { return storedRun_; }

  void addStep(const ps::StepRecord& step);
  void addEval(const ps::EvalRecord& eval);
  void addHistogram(const ps::HistogramRecord& histogram);
  void addEvent(const ps::EventRecord& event);
  void flush();  // moves pending data into the charts now (the timer does this ~30 times a second)
  int redrawIntervalMs() const { return redraw_.interval(); }
  long long frameCount() const { return frames_; }  // redraws with something new, since construction

  std::vector<PlotWidget*> plots() const;
  std::vector<HeatmapWidget*> heatmaps() const { return heatmaps_; }
  // The codec each link used in its latest step, e.g. {"link0/fwd": "topk k=0.05"}.
  const std::map<std::string, std::string>& linkMethods() const { return linkMethods_; }
  int64_t lastStep() const { return lastStep_; }
  int exportPng(const QString& dir);  // every chart, one file each; returns how many were written
  // The charts and the step timeline are two tabs of the panel.
  QTabWidget* views() const { return views_; }
  TimelineView* timeline() const { return timeline_; }

 private:
  struct Route {
    PlotWidget* plot;
    QString id, label;
    QColor colour;
    bool dashed;
    bool cumulative = false;
    double scale = 1;  // the chart's: drawn value = recorded value x scale
    double total = 0;  // a cumulative route's running sum
  };
  PlotWidget* addPlot(const QString& title, const QString& yLabel, bool logY = false);
  void route(const std::string& key, PlotWidget* plot, const QString& label, const QColor& colour, bool dashed = false,
             bool cumulative = false, double scale = 1);
  std::vector<Route>& routesFor(const std::string& key);
  void queue(const MetricPoint& point);

  QGridLayout* grid_;
  QWidget* canvas_;
  QTabWidget* views_;
  TimelineView* timeline_;
  std::map<QString, PlotWidget*> plots_;  // by title
  std::vector<HeatmapWidget*> heatmaps_;
  std::vector<std::pair<const ChartSpec*, PlotWidget*>> charts_;  // the chart table's live charts for this run
  SeriesColours colours_;  // one colour per series name over all the charts: "train" is the same colour everywhere
  std::map<std::string, std::vector<Route>> routes_;              // every key seen, with where it is drawn

  std::vector<MetricPoint> pending_;
  std::vector<HistogramRecord> pendingHistograms_;
  std::vector<Marker> pendingMarkers_;
  std::map<std::string, std::string> linkMethods_;
  std::optional<ps::RunInfo> storedRun_;
  int64_t lastStep_ = 0;
  QTimer redraw_;
  long long frames_ = 0;
  double paintMark_ = 0, frameCost_ = 0;  // paint seconds at the last flush; smoothed cost of one frame
};

}  // namespace ps::ui
