#pragma once
// ps::ui::CompareControls: the compare view's bar: the x axis, smoothing, log y, ignoring outliers, seed groups, a
// chart of any recorded metric (searched by title), and the export buttons, wrapping onto more rows when narrow. It
// shows a CompareOptions and says what the user asked for; it holds no runs and changes nothing itself.
#include "app/ui/charts/PlotWidget.h"  // ChartFormat
#include "app/ui/runs/CompareDrawing.h"

#include <QWidget>

#include <set>
#include <string>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;

namespace ps::ui {

class CompareControls : public QWidget {
  Q_OBJECT
 public:
  explicit CompareControls(QWidget* parent = nullptr);

  // Shows `options` without emitting anything.
  void setOptions(const CompareOptions& options);
  // The recorded metric keys offered as charts of their own, by title (searchable); `canRemove` shows the button that
  // removes the added ones.
  void setMetricKeys(const std::set<std::string>& keys, bool canRemove);
  QComboBox* metricPicker() const { return metrics_; }
  QPushButton* removeMetricsButton() const { return removeMetrics_; }

 Q_SIGNALS:
  void axisChosen(ps::ui::XAxis axis);
  void smoothingChosen(double weight);
  void logYChosen(bool on);
  void ignoreOutliersChosen(bool on);
  void groupSeedsChosen(bool on);
  void metricChartRequested(const QString& key);
  void removeMetricChartsRequested();
  void exportChartsRequested(ps::ui::ChartFormat format);
  void exportVisibleCsvRequested();

 private:
  QComboBox* axis_ = nullptr;
  QSlider* smoothing_ = nullptr;
  QLabel* smoothingValue_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QCheckBox* ignoreOutliers_ = nullptr;
  QCheckBox* groupSeeds_ = nullptr;
  QComboBox* metrics_ = nullptr;
  QPushButton* removeMetrics_ = nullptr;
  QWidget* smoothingGroup();
};

}  // namespace ps::ui
