#pragma once
// ps::ui::CompareGrid: the compare view's charts in a scrolling grid, two to a row, with the x range of the line
// charts linked: zoom one and every other line chart shows the same range. It draws what it is given; which charts
// and which runs is the view's.
#include "app/ui/charts/PlotWidget.h"  // ChartFormat
#include "app/ui/runs/CompareCharts.h"
#include "app/ui/runs/CompareDrawing.h"

#include <QScrollArea>

#include <vector>

class QGridLayout;

namespace ps::ui {

class CompareGrid : public QScrollArea {
  Q_OBJECT
 public:
  explicit CompareGrid(QWidget* parent = nullptr);

  // A different chart set (by titles) gets new plots; the same set keeps its plots and their zoom, as on a live
  // reload.
  void setCharts(const std::vector<CompareChart>& charts);
  const std::vector<CompareChart>& charts() const { return charts_; }
  const std::vector<PlotWidget*>& plots() const { return plots_; }  // parallel to charts()
  PlotWidget* plot(const QString& title) const;                     // null when there is no such chart

  void draw(const std::vector<const RunSeries*>& runs, const CompareOptions& options, const RunNames& names);
  void setLogY(bool on);
  void resetZoom();

  // One file per chart in `dir`, named after its title ("train-loss.svg"); returns how many were written.
  int exportAll(const QString& dir, ChartFormat format) const;
  // Each chart with the x range it shows (nullopt: unzoomed), for the CSV of the visible range.
  std::vector<CsvChart> visibleRanges() const;

 private:
  void linkZoom(PlotWidget* source, double lo, double hi);

  std::vector<CompareChart> charts_;
  std::vector<PlotWidget*> plots_;
  QWidget* host_ = nullptr;
  QGridLayout* grid_ = nullptr;
};

}  // namespace ps::ui
