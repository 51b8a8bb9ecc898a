#include "app/report/ReportCharts.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"

#include <QDir>

namespace ps::report {

bool drawChart(const ReportChart& chart, const QString& path, QSize size) {
  ui::PlotWidget plot(QString::fromStdString(chart.title));
  plot.resize(size);
  plot.setAxisLabels(QString::fromStdString(chart.x_label), QString::fromStdString(chart.y_label));
  QStringList categories;
  for (const auto& c : chart.categories) categories << QString::fromStdString(c);
  plot.setCategories(categories);
  int index = 0;
  for (const auto& s : chart.series) {
    ui::SeriesStyle style;
    style.color = ui::paletteColor(s.color);
    style.scatter = chart.kind == ReportChart::Kind::Scatter;
    style.bars = chart.kind == ReportChart::Kind::Bars;
    std::vector<QPointF> points;
    points.reserve(s.points.size());
    for (const auto& [x, y] : s.points) points.emplace_back(x, y);
    plot.setSeries(QString::number(index++), QString::fromStdString(s.label), std::move(points), style);
  }
  return plot.exportPng(path);
}

std::vector<bool> drawCharts(const std::vector<ReportChart>& charts, const std::string& dir) {
  const QDir root(QString::fromStdString(dir));
  root.mkpath(QStringLiteral("charts"));
  std::vector<bool> drawn;
  for (const auto& c : charts)
    drawn.push_back(drawChart(c, root.filePath(QStringLiteral("charts/") + QString::fromStdString(c.file))));
  return drawn;
}

std::string writeReport(const SuiteResults& results, const std::string& dir, std::vector<bool>* drawn) {
  const auto charts = suiteCharts(results);
  const auto written = drawCharts(charts, dir);
  if (drawn) *drawn = written;
  return writeSuiteReport(results, charts, written, "the PNG file could not be written in " + dir + "/charts", dir);
}

}  // namespace ps::report
