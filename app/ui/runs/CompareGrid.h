#pragma once
// ps::ui::CompareGrid: the compare view's charts in a scrolling grid, two to a row, under one legend for all of them
// (the charts show the same runs in the same colours, so no chart spends its height on a legend of its own; with seeds
// grouped the Pareto chart, which keeps every run, names them below its own plot), with
// the x range of the line charts linked: zoom one and every other line chart shows the same range. It draws what it
// is given; which charts and which runs is the view's.
#include "app/ui/charts/PlotWidget.h"  // ChartFormat
#include "app/ui/runs/CompareCharts.h"
#include "app/ui/runs/CompareDrawing.h"

#include <QWidget>

#include <vector>

class QGridLayout;
class QScrollArea;

namespace ps::ui {

class ChartLegend;

class CompareGrid : public QWidget {
  Q_OBJECT
 public:
  explicit CompareGrid(QWidget* parent = nullptr);

  // A different chart set (by titles) gets new plots; the same set keeps its plots and their zoom, as on a live
  // reload.
  void setCharts(const std::vector<CompareChart>& charts);
  const std::vector<CompareChart>& charts() const { return charts_; }
  const std::vector<PlotWidget*>& plots() const { return plots_; }  // parallel to charts()
  PlotWidget* plot(const QString& title) const;                     // null when there is no such chart
  const ChartLegend* legend() const { return legend_; }

  void draw(const std::vector<const RunSeries*>& runs, const CompareOptions& options, const RunNames& names);
  void setLogY(bool on);
  void resetZoom();

  // One file per chart in `dir`, named after its title ("train-loss.svg"); returns how many were written.
  int exportAll(const QString& dir, ChartFormat format) const;
  // Each chart with the x range it shows (nullopt: unzoomed), for the CSV of the visible range.
  std::vector<CsvChart> visibleRanges() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitLegend();
  void linkZoom(PlotWidget* source, double lo, double hi);

  std::vector<CompareChart> charts_;
  std::vector<PlotWidget*> plots_;
  ChartLegend* legend_;
  QScrollArea* legendScroll_;
  QWidget* host_;
  QGridLayout* grid_;
};

}  // namespace ps::ui
