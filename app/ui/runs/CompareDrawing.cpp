#include "app/ui/runs/CompareDrawing.h"
#include "app/ui/runs/SeedGroups.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/charts/Smoothing.h"

#include <QCoreApplication>

#include <algorithm>
#include <utility>

namespace ps::ui {

namespace {

QString seriesId(qint64 id) {
  return QStringLiteral("run%1").arg(id);
}
QString groupSeriesId(qint64 firstRun) {
  return QStringLiteral("group%1").arg(firstRun);
}
// Smoothing is for dense series, a value at most steps. Evaluations (a few per run) are drawn as measured: smoothed,
// the line would end well below the run's real final accuracy.
bool dense(size_t points, const RunSeries& run) {
  int64_t steps = 0;
  for (const auto& [key, series] : run.metrics)
    if (!series.empty()) steps = std::max(steps, series.back().step);
  return 2 * int64_t(points) >= steps;
}

// One run's line, smoothed with the raw line faint behind where the series is dense.
void drawRun(PlotWidget& plot, const CompareChart& chart, const RunSeries& r, const CompareOptions& o,
             const QString& name) {
  auto points = chartLine(chart, r, o.axis);
  if (points.empty()) return;
  const QColor color = runColor(r.info.id);
  const QString id = seriesId(r.info.id);
  if (o.smoothing > 0 && dense(points.size(), r)) {
    SeriesStyle raw{color, true};  // faint, and not listed: the smoothed line names the run
    raw.legend = false;
    plot.setSeries(id + QStringLiteral("/raw"), name, points, raw);
    plot.setSeries(id, name, smoothEma(points, o.smoothing), SeriesStyle{color});
  } else {
    plot.setSeries(id, name, std::move(points), SeriesStyle{color});
  }
}

// Runs that differ only in seed: their mean line, in the first run's colour, over their min–max band. False when
// fewer than two of them have this chart's metric (they are then drawn one by one).
bool drawGroup(PlotWidget& plot, const CompareChart& chart, const std::vector<const RunSeries*>& group,
               const QString& name, const CompareOptions& o) {
  std::vector<std::vector<QPointF>> lines;
  for (const RunSeries* r : group)
    if (auto points = chartLine(chart, *r, o.axis); !points.empty()) lines.push_back(std::move(points));
  if (lines.size() < 2) return false;
  SeedBand band = seedBand(lines);
  if (band.mean.empty()) return false;
  const RunSeries& first = *group.front();
  if (o.smoothing > 0 && dense(band.mean.size(), first))
    for (auto* line : {&band.mean, &band.lo, &band.hi}) *line = smoothEma(*line, o.smoothing);
  const QColor color = runColor(first.info.id);
  const QString id = groupSeriesId(first.info.id);
  SeriesStyle edge{color, true};
  edge.legend = false;  // the mean line names the group
  plot.setSeries(id + QStringLiteral("/hi"), QString(), std::move(band.hi), edge);
  edge.fillTo = id + QStringLiteral("/hi");
  plot.setSeries(id + QStringLiteral("/lo"), QString(), std::move(band.lo), edge);
  plot.setSeries(
      id,
      QCoreApplication::translate("ps::ui::CompareView", "%1 (mean of %n seeds)", nullptr, int(lines.size())).arg(name),
      std::move(band.mean), SeriesStyle{color});
  return true;
}

}  // namespace

void drawCompareChart(PlotWidget& plot, const CompareChart& chart, const std::vector<const RunSeries*>& runs,
                      const CompareOptions& o, const RunNames& names) {
  plot.clear();
  plot.setLogY(o.logY);
  plot.setIgnoreOutliers(o.ignoreOutliers);
  if (chart.kind == CompareChart::Kind::Pareto) {
    plot.setAxisLabels(xAxisLabel(XAxis::Bytes), chart.yLabel);
    for (const RunSeries* r : runs) {
      const QColor color = runColor(r->info.id);
      SeriesStyle curve{color};  // the path there: dashed, not in the legend (the final point names the run)
      curve.dashed = true;
      curve.legend = false;
      plot.setSeries(seriesId(r->info.id) + QStringLiteral("/curve"), names.of(*r), paretoCurve(*r), curve);
      SeriesStyle last{color};
      last.scatter = true;
      if (auto point = paretoPoint(*r)) plot.setSeries(seriesId(r->info.id), names.of(*r), {*point}, last);
    }
    return;
  }
  plot.setAxisLabels(xAxisLabel(o.axis), chart.yLabel);
  std::vector<Marker> markers;
  std::vector<std::vector<const RunSeries*>> groups;
  if (o.groupSeeds)
    groups = seedGroups(runs);
  else
    for (const RunSeries* r : runs) groups.push_back({r});
  for (const auto& group : groups) {
    if (group.size() < 2 || !drawGroup(plot, chart, group, names.groupOf(*group.front()), o))
      for (const RunSeries* r : group) drawRun(plot, chart, *r, o, names.of(*r));
    // With several runs a marker says whose change it was by the run's id, which leads its name in the legend: the
    // line is short enough to show the change itself.
    for (const RunSeries* r : group)
      for (const auto& [x, label] : r->markers(o.axis))
        markers.push_back({x, runs.size() > 1 ? QStringLiteral("#%1: ").arg(r->info.id) + label : label});
  }
  plot.setMarkers(std::move(markers));
}

}  // namespace ps::ui
