// PlotWidget layout and autoscale: from the data, the zoom and a widget size to a PlotFrame.
#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/Decimate.h"
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace ps::ui {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRightMargin = 14;
constexpr double kLegendMargin = 8;
// A series with at most this many points in view is sparse (evaluations, a few markers of a run): its points always
// count for the y range, so outlier trimming of the dense series never hides it.
constexpr std::size_t kSparsePoints = 32;
// A linear y range spans at least this fraction of the values' magnitude, so a nearly flat series (bytes per step
// that differ only by a header) is drawn flat instead of blown up into what looks like noise.
constexpr double kMinRelativeSpan = 0.01;

// Widens a degenerate range around its value: +-5% of it, or +-0.5 around zero.
void widenDegenerate(double& lo, double& hi) {
  if (hi - lo > 1e-12 * std::max(1.0, std::fabs(lo))) return;
  const double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.05;
  lo -= pad;
  hi += pad;
}

// What the series hold, over all of them (kept per series, so this is O(series)).
struct DataBounds {
  bool empty = true;
  double xMin = kInf, xMax = -kInf, minPositive = kInf;
  double xMinPositive = kInf, xMaxPositive = -kInf;  // for a log x axis (found only for one)
  bool anyScatter = false, anyBars = false;
};

DataBounds boundsOf(const std::vector<PlotSeries>& series, bool logX) {
  DataBounds d;
  if (logX)  // a log axis' charts hold few points: scanned here rather than kept on every append
    for (const PlotSeries& s : series)
      for (const QPointF& p : s.points)
        if (p.x() > 0 && std::isfinite(p.x()) && std::isfinite(p.y()))
          d.xMinPositive = std::min(d.xMinPositive, p.x()), d.xMaxPositive = std::max(d.xMaxPositive, p.x());
  for (const PlotSeries& s : series) {
    if (!s.any) continue;
    d.empty = false;
    d.xMin = std::min(d.xMin, s.xMin);
    d.xMax = std::max(d.xMax, s.xMax);
    d.minPositive = std::min(d.minPositive, s.minPositive);
    d.anyScatter = d.anyScatter || s.style.scatter;
    d.anyBars = d.anyBars || s.style.bars;
  }
  return d;
}

// The x range: the zoom, else every category, else the data (scatter plots get a margin so edge points are not cut
// in half).
void chooseXRange(PlotFrame& f, const DataBounds& d, const std::optional<std::pair<double, double>>& zoom,
                  qsizetype categories) {
  if (zoom) {
    f.x0 = zoom->first;
    f.x1 = zoom->second;
  } else if (categories > 0) {
    f.x0 = -0.6;  // with room for half a bar either side
    f.x1 = double(categories) - 0.4;
  } else if (!d.empty && f.logX) {  // the positive x, with the scatter margin in decades
    const double pad = d.anyScatter ? std::pow(10.0, 0.03 * std::log10(d.xMaxPositive / d.xMinPositive)) : 1;
    f.x0 = d.xMinPositive / pad;
    f.x1 = d.xMaxPositive * pad;
  } else if (!d.empty) {
    const double pad = d.anyScatter ? (d.xMax - d.xMin) * 0.03 : 0;
    f.x0 = d.xMin - pad;
    f.x1 = d.xMax + pad;
  }
  if (!f.logX) {
    widenDegenerate(f.x0, f.x1);
    return;
  }
  if (!(f.x0 > 0 && std::isfinite(f.x0))) f.x0 = f.x1 > 0 && std::isfinite(f.x1) ? f.x1 / 10 : 1;
  if (!(f.x1 > f.x0 * (1 + 1e-9))) f.x0 /= 2, f.x1 = f.x0 * 4;  // one point: a factor of two either side
}

// The y range of the visible values (transformed), padded by 5%; one decade either side for a constant log plot.
// With outliers ignored, the range of the dense series' values `pooled` is outlier-robust, and every value in `kept`
// (sparse series: a few evaluations among many training steps) is inside it whatever its size; otherwise every value
// is. Bars stand on zero.
void chooseYRange(PlotFrame& f, std::vector<double>& pooled, const std::vector<double>& kept, bool anyBars,
                  bool ignoreOutliers) {
  if (anyBars && !f.logY) pooled.push_back(0);
  if (pooled.empty() && kept.empty()) {
    f.y0 = 0;
    f.y1 = 1;
    return;
  }
  f.y0 = kInf;
  f.y1 = -kInf;
  if (!pooled.empty()) {
    if (ignoreOutliers) {
      std::tie(f.y0, f.y1) = axis::robustRange(pooled);
    } else {
      const auto [mn, mx] = std::minmax_element(pooled.begin(), pooled.end());
      f.y0 = *mn, f.y1 = *mx;
    }
  }
  for (double y : kept) f.y0 = std::min(f.y0, y), f.y1 = std::max(f.y1, y);
  const double minSpan = f.logY ? 0 : kMinRelativeSpan * std::max(std::fabs(f.y0), std::fabs(f.y1));
  if (f.y1 - f.y0 < minSpan) {
    const double mid = 0.5 * (f.y0 + f.y1);
    f.y0 = mid - 0.5 * minSpan;
    f.y1 = mid + 0.5 * minSpan;
  }
  if (f.y1 - f.y0 > 1e-12 * std::max(1.0, std::fabs(f.y0))) {
    const double pad = (f.y1 - f.y0) * 0.05;
    f.y0 -= pad;
    f.y1 += pad;
  } else if (f.logY) {
    f.y0 -= 0.5;
    f.y1 += 0.5;
  } else {
    widenDegenerate(f.y0, f.y1);
  }
}

// About `target` y ticks: on a log axis spread over the whole range (logTicks), else nice linear values.
void placeYTicks(PlotFrame& f, int target) {
  double step = 1;
  if (f.logY) {
    const double lo = std::pow(10.0, f.y0), hi = std::pow(10.0, f.y1);
    const std::vector<double> ticks = axis::logTicks(lo, hi, target);
    for (double v : ticks) {
      f.yTicks.push_back(std::log10(v));
      f.yTickLabels << axis::formatTick(v, v);
    }
    if (!ticks.empty()) return;
    for (double v : axis::linearTicks(lo, hi, target, &step)) {
      if (v <= 0) continue;
      f.yTicks.push_back(std::log10(v));
      f.yTickLabels << axis::formatTick(v, step);
    }
    return;
  }
  f.yTicks = axis::linearTicks(f.y0, f.y1, target, &step);
  for (double v : f.yTicks) f.yTickLabels << axis::formatTick(v, step);
}

// X ticks: one per category, else about one per 100 pixels of the plot.
void placeXTicks(PlotFrame& f, const QStringList& categories) {
  for (qsizetype i = 0; i < categories.size(); ++i) {
    f.xTicks.push_back(double(i));
    f.xTickLabels << categories[i];
  }
  if (!categories.isEmpty()) return;
  const int target = std::max(2, static_cast<int>(f.plot.width() / 100));
  if (f.logX) {
    for (double v : axis::logTicks(f.x0, f.x1, target)) {
      f.xTicks.push_back(v);
      f.xTickLabels << axis::formatTick(v, v);
    }
    return;
  }
  double step = 1;
  f.xTicks = axis::linearTicks(f.x0, f.x1, target, &step);
  for (double v : f.xTicks) f.xTickLabels << axis::formatTick(v, step);
}

// The legend's entries flowing left to right in rows across the width, at most kLegendRows rows: the last place becomes
// "+N more" when the series do not all fit. Positions are relative to the legend's top left corner.
constexpr int kLegendRows = 3;

std::vector<LegendEntry> flowLegend(const PlotData& chart, double width, const QFontMetricsF& fm) {
  std::vector<LegendEntry> out;
  if (!chart.legendShown) return out;
  const double row = fm.height() + 2, gap = 14, maxText = std::max(60.0, width * 0.45);
  const auto widthOf = [&](const QString& text) {
    return kSwatchWidth + 6 + std::min(maxText, fm.horizontalAdvance(text));
  };
  std::vector<int> series;
  std::vector<double> widths;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const PlotSeries& s = chart.series[i];
    if (!s.style.legend || s.label.isEmpty()) continue;
    series.push_back(int(i));
    widths.push_back(widthOf(s.label));
  }
  const int listed = int(series.size());
  const std::vector<QRectF> boxes = flowRows(widths, width, row, gap);
  for (int n = 0; n < listed && boxes[size_t(n)].top() < (kLegendRows - 0.5) * row; ++n) {
    const QString& label = chart.series[size_t(series[size_t(n)])].label;
    out.push_back({series[size_t(n)], boxes[size_t(n)], fm.elidedText(label, Qt::ElideMiddle, maxText)});
  }
  if (int(out.size()) == listed) return out;
  // Too many to list: the last row ends with "+N more", dropping entries until it fits.
  while (true) {
    const QString more = QObject::tr("+%1 more").arg(listed - int(out.size()));
    const double after = out.empty() ? 0 : out.back().box.right() + gap;
    const bool sameRow = !out.empty() && out.back().box.top() == (kLegendRows - 1) * row;
    if (out.empty() || !sameRow || after + widthOf(more) <= width) {
      const double at = sameRow ? after : 0;
      out.push_back({-1, QRectF(at, (kLegendRows - 1) * row, widthOf(more) - kSwatchWidth - 6, row), more});
      return out;
    }
    out.pop_back();
  }
}

// Points above or below the y range, marked on the plot's top or bottom edge, one mark per pixel column and edge.
void markOffScale(PlotFrame& f, const PlotData& chart) {
  std::set<std::pair<long, bool>> marked;  // (pixel column, above)
  const auto check = [&](const QPointF& p) {
    if (p.x() < f.x0 || p.x() > f.x1 || !std::isfinite(p.y())) return;
    const double t = f.ty(p.y());
    if (t >= f.y0 && t <= f.y1) return;
    const double x = f.px(p.x());
    if (marked.insert({std::lround(x), t > f.y1}).second)
      f.offScale.emplace_back(x, t > f.y1 ? f.plot.top() : f.plot.bottom());
  };
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const PlotSeries& s = chart.series[i];
    if (s.style.bars || s.style.fillTo.size() || s.style.faint) continue;  // bands and raw lines follow their line
    for (const QPointF& p : s.style.scatter ? s.points : f.lines[i]) check(p);
  }
}

}  // namespace

// Markers in x order; one within a label's height of the one before starts its label where that one's ends.
void placeMarkerLabels(PlotFrame& f, const PlotData& chart, const QFontMetricsF& fm) {
  std::vector<const Marker*> shown;
  for (const Marker& m : chart.markers)
    if (m.x >= f.x0 && m.x <= f.x1 && !m.label.isEmpty()) shown.push_back(&m);
  std::stable_sort(shown.begin(), shown.end(), [](const Marker* a, const Marker* b) { return a->x < b->x; });
  const double room = f.plot.height() - 8, minimum = fm.horizontalAdvance(QStringLiteral("a…z")) + 4;
  double lastX = -kInf, nextAlong = 4;
  for (const Marker* m : shown) {
    const double x = f.px(m->x);
    const double along = x - lastX < fm.height() + 2 ? nextAlong : 4;
    lastX = x;
    if (along + minimum > room) continue;  // no room left along this line: the crosshair still names it
    const QString text = fm.elidedText(m->label, Qt::ElideMiddle, room - along);
    const double length = fm.horizontalAdvance(text) + 4;
    f.markerLabels.push_back({x, along, text, QRectF(x + 2, f.plot.top() + along, fm.height(), length)});
    nextAlong = along + length + 6;
  }
}

std::vector<QRectF> flowRows(const std::vector<double>& widths, double width, double row, double gap) {
  std::vector<QRectF> boxes;
  double x = 0;
  int line = 0;
  for (double w : widths) {
    if (x > 0 && x + w > width) x = 0, ++line;
    boxes.emplace_back(x, line * row, w, row);
    x += w + gap;
  }
  return boxes;
}

PlotFrame layOutPlot(PlotData& chart, QSize size, const QFont& font) {
  PlotFrame f;
  f.logY = chart.logY;
  f.logX = chart.logX && chart.categories.isEmpty();
  const QFontMetricsF fm(font);
  const double lineH = fm.height();

  // 1. The x range and the log floor, from the zoom or the data.
  const DataBounds data = boundsOf(chart.series, f.logX);
  f.empty = data.empty;
  f.logFloor = std::isfinite(data.minPositive) ? data.minPositive / 10 : 1e-12;
  chooseXRange(f, data, chart.xRange, chart.categories.size());

  // 2. Vertical layout (title, plot, x axis, legend), and a first guess at the plot width (the y tick labels are not
  // known yet).
  f.titleHeight = chart.title.isEmpty() ? 6 : lineH + 10;
  const double xAxisHeight = lineH + 8 + (chart.xLabel.isEmpty() ? 0 : lineH + 2);
  const double yLabelWidth = chart.yLabel.isEmpty() ? 0 : lineH + 4;
  f.legend = flowLegend(chart, std::max(1.0, size.width() - 2 * kLegendMargin), fm);
  const double legendHeight = f.legend.empty() ? 0 : f.legend.back().box.bottom() + 4;
  const double plotHeight = std::max(1.0, size.height() - f.titleHeight - xAxisHeight - legendHeight);
  const double guessLeft = yLabelWidth + fm.horizontalAdvance(QStringLiteral("-8.88k")) + 10;
  const int columns = std::max(1, static_cast<int>(size.width() - guessLeft - kRightMargin));

  // 3. Decimate the lines to the visible range and collect the visible y values (transformed): a sparse series'
  // values are kept in range, a dense one's are pooled for the outlier-robust range.
  std::vector<double> pooled, kept;
  f.lines.resize(chart.series.size());
  const auto collect = [&](const std::vector<QPointF>& points, bool scatter) {
    std::vector<double> ys;
    for (const QPointF& p : points)
      if (p.x() >= f.x0 && p.x() <= f.x1 && std::isfinite(p.y())) ys.push_back(f.ty(p.y()));
    auto& into = scatter || ys.size() <= kSparsePoints ? kept : pooled;
    into.insert(into.end(), ys.begin(), ys.end());
  };
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    PlotSeries& s = chart.series[i];
    if (s.style.scatter || s.style.bars) {
      collect(s.points, s.style.scatter);
      continue;
    }
    s.ensureSorted();
    f.lines[i] = f.logX ? s.points : decimate(s.points, f.x0, f.x1, columns);
    collect(f.lines[i], false);
  }

  // 4. The y range and its ticks.
  chooseYRange(f, pooled, kept, data.anyBars, chart.ignoreOutliers);
  placeYTicks(f, std::max(2, static_cast<int>(plotHeight / 50)));

  // 5. The plot rectangle, now that the widest y tick label is known.
  double labelWidth = 0;
  for (const QString& s : f.yTickLabels) labelWidth = std::max(labelWidth, fm.horizontalAdvance(s));
  const double left = yLabelWidth + labelWidth + 10;
  f.plot = QRectF(left, f.titleHeight, std::max(1.0, size.width() - left - kRightMargin), plotHeight);
  for (LegendEntry& e : f.legend) e.box.translate(kLegendMargin, f.plot.bottom() + xAxisHeight);

  // 6. X ticks, and where points left off the scale are marked at its edges.
  placeXTicks(f, chart.categories);
  markOffScale(f, chart);
  placeMarkerLabels(f, chart, fm);
  return f;
}

}  // namespace ps::ui
