#pragma once
// ps::ui::CompareView: overlays a set of runs on a grid of charts (CompareCharts.h) with one x axis for all of
// them (step, wall time, emulated time, re-timed for any network, or cumulative wire bytes), debiased-EMA smoothing
// with the raw line faint behind, log y, per-run visibility, mid-run changes as markers, linked zoom across the line
// charts, the loss-versus-bytes (Pareto) scatter and a settings diff table. The view holds the runs and what the user
// chose; its collaborators: the bar of controls (CompareControls.h), the grid of charts with linked zoom
// (CompareGrid.h), how runs are drawn on one chart (CompareDrawing.h), the run list, the settings diff and the
// time-to-target table.
#include "app/ui/charts/PlotWidget.h"  // ChartFormat
#include "app/ui/runs/CompareCharts.h"
#include "app/ui/runs/CompareDrawing.h"
#include "app/ui/runs/RunSeries.h"

#include <QList>
#include <QWidget>

#include <memory>
#include <set>
#include <vector>

class QSplitter;
class QTabWidget;
class QToolButton;

namespace ps::ui {

class BreakevenChart;
class CompareControls;
class CompareGrid;
class NetworkControls;
class PlotWidget;
class RunChecklist;
class SettingsDiffModel;
class SettingsDiffView;
class TargetTable;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);
  ~CompareView() override;

  // Loads the runs (errors go to errorOccurred; runs that cannot be read are left out) and rebuilds the charts.
  // The runs in `hidden` start hidden (the runs table's unticked ones).
  void setRuns(std::shared_ptr<ps::RunStore> store, const QList<qint64>& ids, const std::set<qint64>& hidden = {});
  QList<qint64> runIds() const;
  const std::vector<RunSeries>& runs() const { return runs_; }

  QList<PlotWidget*> plots() const;
  CompareControls* controls() const { return controls_; }
  PlotWidget* plot(const QString& title) const;  // null when there is no such chart

  XAxis xAxis() const { return options_.axis; }
  void setXAxis(XAxis axis);  // resets any zoom: the old range means nothing on the new axis
  double smoothing() const { return options_.smoothing; }
  void setSmoothing(double weight);  // clamped to 0 .. 0.99
  bool logY() const { return options_.logY; }
  void setLogY(bool on);
  bool ignoreOutliers() const { return options_.ignoreOutliers; }
  void setIgnoreOutliers(bool on);  // every chart: y scaled to the bulk of dense series (on by default)
  // Runs that differ only in seed drawn as one mean line ("group<first run id>") with a min–max band
  // ("group<ID>/lo" filled to "group<ID>/hi") on the line charts; the Pareto chart keeps every run.
  bool groupSeeds() const { return options_.groupSeeds; }
  void setGroupSeeds(bool on);
  bool isRunVisible(qint64 id) const { return hidden_.count(id) == 0; }
  void setRunVisible(qint64 id, bool visible);  // emits runVisibilityChanged when it changes something

  // The network the emulated time axis and the time-to-target table are re-timed for (engine/runs/trace/Retime.h);
  // an empty one shows the recorded emulated times. Runs saved without step traces keep theirs, with a message.
  RetimeNetwork network() const;
  void setNetwork(const RetimeNetwork& network);

  // A line chart of any recorded metric key, after the standard ones; false when no run has the key or it is there.
  bool addMetricChart(const std::string& key);
  void removeMetricCharts();

  // The settings diff and the time-to-target table share a pane under the charts that folds to its tab bar (a click on
  // a tab unfolds it). Until the user folds or unfolds it, it is folded while the view is short (a laptop's screen),
  // so the charts get the height.
  bool detailsShown() const { return detailsShown_; }
  void setDetailsShown(bool shown);

  SettingsDiffModel* diffModel() const;
  TargetTable* targetTable() const { return target_; }
  BreakevenChart* breakevenChart() const { return breakeven_; }
  int diffRowCount() const;
  void setShowAllSettings(bool all);

  // One file per chart in `dir`, named after its title ("train-loss.svg"); returns how many were written.
  int exportAll(const QString& dir, ChartFormat format);
  int exportAllPng(const QString& dir) { return exportAll(dir, ChartFormat::Png); }
  // Long-format CSV of the points inside each line chart's visible x range; error message or empty.
  QString exportVisibleCsv(const QString& path) const;

 public Q_SLOTS:
  void reload();  // re-reads the same runs (a live run grows), keeping zoom and settings
  void exportAllDialog(ChartFormat format);
  void exportVisibleCsvDialog();

 Q_SIGNALS:
  void statusMessage(const QString& message);
  void errorOccurred(const QString& message);
  void runVisibilityChanged(qint64 id, bool visible);  // from the view's own run list or setRunVisible
  void timeTargetChanged();                            // the network or the time-to-target table's target changed

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void layOut();
  void connectControls();
  void offerMetricCharts();  // every key the runs recorded, for a chart of its own
  void redraw();             // every chart's series and markers from the runs and options
  // Sets one option and shows it in the bar; whether it changed.
  template <typename T>
  bool choose(T CompareOptions::*option, T value);
  std::vector<const RunSeries*> visibleRuns() const;
  void retimeRuns();  // every run at the chosen network
  void mapBreakeven();  // the break-even chart for the visible runs, target and network

  std::shared_ptr<ps::RunStore> store_;
  QList<qint64> ids_;
  std::vector<RunSeries> runs_;
  std::set<qint64> hidden_;
  RunNames names_;                   // what each run is called here: unique among the runs compared
  std::vector<std::string> picked_;  // keys the user added a chart for
  CompareOptions options_;

  CompareControls* controls_;
  NetworkControls* network_;
  RunChecklist* runList_;
  CompareGrid* grid_;
  SettingsDiffView* diff_;
  TargetTable* target_;  // time and bytes to a target accuracy, per visible run
  BreakevenChart* breakeven_;  // time to that target over a range of bandwidths
  QSplitter* body_ = nullptr;
  QTabWidget* details_ = nullptr;  // the diff and the target table
  QToolButton* detailsToggle_ = nullptr;
  bool detailsShown_ = true;
  bool detailsChosen_ = false;  // by the user; until then the view's height decides
};

}  // namespace ps::ui
