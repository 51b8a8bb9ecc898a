// PlotWidget: data, interaction and export. Layout/autoscale live in PlotFrame.cpp, drawing in PlotPainter.cpp.
#include "app/ui/charts/PlotWidget.h"

#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/ExportSettings.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <limits>

namespace ps::ui {

// ---- PlotSeries ----

void PlotSeries::include(const QPointF& p) {
  if (!std::isfinite(p.x()) || !std::isfinite(p.y())) return;
  any = true;
  xMin = std::min(xMin, p.x());
  xMax = std::max(xMax, p.x());
  if (p.y() > 0) minPositive = std::min(minPositive, p.y());
}

void PlotSeries::recomputeBounds() {
  any = false;
  xMin = minPositive = std::numeric_limits<double>::infinity();
  xMax = -xMin;
  for (const QPointF& p : points) include(p);
}

void PlotSeries::ensureSorted() {
  if (sorted) return;
  std::stable_sort(points.begin(), points.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  sorted = true;
}

// ---- Impl ----

PlotSeries* PlotData::find(const QString& id) {
  const auto it = index.constFind(id);
  return it == index.constEnd() ? nullptr : &series[static_cast<std::size_t>(*it)];
}

void PlotData::reindex() {
  index.clear();
  for (std::size_t i = 0; i < series.size(); ++i) index.insert(series[i].id, static_cast<int>(i));
}

const PlotFrame& PlotWidget::Impl::frame(QSize size, const QFont& font) {
  if (cachedGeneration != generation || cachedSize != size || cachedFont != font) {
    cached = layOutPlot(*this, size, font);
    cachedGeneration = generation;
    cachedSize = size;
    cachedFont = font;
  }
  return cached;
}

// ---- PlotWidget ----

PlotWidget::PlotWidget(const QString& title, QWidget* parent) : QWidget(parent), d_(new Impl) {
  d_->title = title;
  setMouseTracking(true);                 // crosshair without a pressed button
  setAttribute(Qt::WA_OpaquePaintEvent);  // the paint fills every pixel
}

PlotWidget::~PlotWidget() {
  delete d_;
}

QString PlotWidget::title() const {
  return d_->title;
}

void PlotWidget::setAxisLabels(const QString& x, const QString& y) {
  d_->xLabel = x;
  d_->yLabel = y;
  d_->changed();
  update();
}

void PlotWidget::setLogY(bool on) {
  if (d_->set(&PlotData::logY, on)) update();
}

bool PlotWidget::logY() const {
  return d_->logY;
}

void PlotWidget::setLogX(bool on) {
  if (d_->set(&PlotData::logX, on)) update();
}

bool PlotWidget::logX() const {
  return d_->logX;
}

void PlotWidget::setCategories(const QStringList& names) {
  d_->categories = names;
  d_->changed();
  update();
}

void PlotWidget::setSeries(const QString& id, const QString& label, std::vector<QPointF> points,
                           const SeriesStyle& style) {
  PlotSeries* s = d_->find(id);
  if (!s) {
    d_->series.emplace_back();
    s = &d_->series.back();
    s->id = id;
    d_->index.insert(id, static_cast<int>(d_->series.size() - 1));
  }
  s->label = label;
  s->style = style;
  s->points = std::move(points);
  const auto byX = [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); };
  s->sorted = style.scatter || style.bars || std::is_sorted(s->points.begin(), s->points.end(), byX);
  s->recomputeBounds();
  d_->changed();
  update();
}

void PlotWidget::appendPoint(const QString& id, const QPointF& point) {
  PlotSeries* s = d_->find(id);
  if (!s) {
    SeriesStyle style;
    style.color = paletteColor(static_cast<int>(d_->series.size()));
    setSeries(id, id, {point}, style);
    return;
  }
  if (!s->style.scatter && !s->points.empty() && point.x() < s->points.back().x()) s->sorted = false;
  s->points.push_back(point);  // amortized O(1); the paint that follows does the rest
  s->include(point);
  d_->changed();
  update();
}

void PlotWidget::removeSeries(const QString& id) {
  const auto it = d_->index.constFind(id);
  if (it == d_->index.constEnd()) return;
  d_->series.erase(d_->series.begin() + *it);
  d_->reindex();
  d_->changed();
  update();
}

bool PlotWidget::hasSeries(const QString& id) const {
  return d_->index.contains(id);
}

void PlotWidget::clear() {
  // The zoom range is kept: resetting it here would silently unlink this chart from its linked charts.
  d_->series.clear();
  d_->index.clear();
  d_->markers.clear();
  d_->changed();
  update();
}

void PlotWidget::addMarker(const Marker& marker) {
  d_->markers.push_back(marker);
  update();
}

void PlotWidget::setMarkers(std::vector<Marker> markers) {
  d_->markers = std::move(markers);
  update();
}

const std::vector<Marker>& PlotWidget::markers() const {
  return d_->markers;
}

QStringList PlotWidget::legendLabels() const {
  QStringList labels;
  for (const PlotSeries& s : d_->series)
    if (s.style.legend) labels << s.label;
  return labels;
}

std::vector<LegendItem> PlotWidget::legendItems() const {
  std::vector<LegendItem> items;
  for (const PlotSeries& s : d_->series)
    if (s.style.legend) items.push_back({s.label, s.style});
  return items;
}

void PlotWidget::setLegendVisible(bool on) {
  if (d_->set(&PlotData::legendShown, on)) update();
}

bool PlotWidget::legendVisible() const {
  return d_->legendShown;
}

QRectF PlotWidget::plotArea() const {
  return d_->frame(effectiveSize(this), font()).plot;
}

std::vector<QRectF> PlotWidget::legendBoxes() const {
  std::vector<QRectF> boxes;
  for (const LegendEntry& e : d_->frame(effectiveSize(this), font()).legend) boxes.push_back(e.box);
  return boxes;
}

std::vector<QRectF> PlotWidget::markerLabelBoxes() const {
  std::vector<QRectF> boxes;
  for (const MarkerLabel& m : d_->frame(effectiveSize(this), font()).markerLabels) boxes.push_back(m.box);
  return boxes;
}

QStringList PlotWidget::crosshairLines(double pixelX) const {
  const PlotFrame& f = d_->frame(effectiveSize(this), font());
  const double x = f.dataX(pixelX);
  QStringList lines{crosshairHeader(*d_, x)};
  for (const CrosshairReading& r : crosshairReadings(*d_, f, x))
    lines << QStringLiteral("%1: %2").arg(r.label, axis::formatValue(r.point.y()));
  return lines;
}

int PlotWidget::seriesCount() const {
  return static_cast<int>(d_->series.size());
}

int PlotWidget::pointCount() const {
  std::size_t n = 0;
  for (const PlotSeries& s : d_->series) n += s.points.size();
  return static_cast<int>(std::min<std::size_t>(n, std::numeric_limits<int>::max()));
}

int PlotWidget::pointCount(const QString& id) const {
  const PlotSeries* s = d_->find(id);
  return s ? static_cast<int>(s->points.size()) : 0;
}

std::vector<QPointF> PlotWidget::points(const QString& id) const {
  PlotSeries* s = d_->find(id);
  if (!s) return {};
  s->ensureSorted();
  return s->points;
}

void PlotWidget::setXRange(std::optional<std::pair<double, double>> range) {
  if (range) {
    if (!std::isfinite(range->first) || !std::isfinite(range->second)) {
      range.reset();  // a NaN range (as xRangeChanged sends after a reset) means fit
    } else if (range->first > range->second) {
      std::swap(range->first, range->second);
    }
  }
  d_->xRange = range;
  d_->changed();
  update();
}

std::optional<std::pair<double, double>> PlotWidget::xRange() const {
  return d_->xRange;
}

// The size a chart is laid out at when it has none worth the name yet (never shown, or squeezed).
QSize effectiveSize(const QWidget* w) {
  const QSize s = w->size();
  if (w->isVisible() && s.width() >= 240 && s.height() >= 160) return s;
  return s.expandedTo(QSize(640, 400));
}

void PlotWidget::setIgnoreOutliers(bool on) {
  if (d_->set(&PlotData::ignoreOutliers, on)) update();
}

bool PlotWidget::ignoreOutliers() const {
  return d_->ignoreOutliers;
}

int PlotWidget::offScaleMarks() const {
  return static_cast<int>(d_->frame(effectiveSize(this), font()).offScale.size());
}

std::pair<double, double> PlotWidget::visibleYRange() const {
  const PlotFrame& f = d_->frame(effectiveSize(this), font());
  return {f.fromTy(f.y0), f.fromTy(f.y1)};
}

namespace {
double paintSeconds = 0;  // GUI thread only
long long paintCount = 0;
}

double PlotWidget::paintSecondsTotal() { return paintSeconds; }
long long PlotWidget::paintCountTotal() { return paintCount; }

void PlotWidget::paintEvent(QPaintEvent*) {
  QElapsedTimer clock;
  clock.start();
  {
    QPainter p(this);
    PlotPainter(*d_, d_).paint(p, d_->frame(size(), font()), size(), font(), palette());
  }
  paintSeconds += double(clock.nsecsElapsed()) * 1e-9;
  ++paintCount;
}

void PlotWidget::mousePressEvent(QMouseEvent* event) {
  const PlotFrame& f = d_->frame(size(), font());
  if (event->button() != Qt::LeftButton || f.empty || !f.plot.contains(event->position())) {
    QWidget::mousePressEvent(event);
    return;
  }
  d_->dragging = true;
  d_->dragFrom = d_->dragTo = event->position().x();
  update();
}

void PlotWidget::mouseMoveEvent(QMouseEvent* event) {
  const PlotFrame& f = d_->frame(size(), font());
  const QPointF pos = event->position();
  if (d_->dragging) d_->dragTo = std::clamp(pos.x(), f.plot.left(), f.plot.right());
  d_->hovering = !f.empty && f.plot.contains(pos);
  d_->hover = pos;
  update();
}

void PlotWidget::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !d_->dragging) {
    QWidget::mouseReleaseEvent(event);
    return;
  }
  const PlotFrame& f = d_->frame(size(), font());
  d_->dragging = false;
  d_->dragTo = std::clamp(event->position().x(), f.plot.left(), f.plot.right());
  const double a = std::min(d_->dragFrom, d_->dragTo), b = std::max(d_->dragFrom, d_->dragTo);
  update();
  if (b - a <= 4) return;  // a click, not a drag
  const double lo = f.dataX(a), hi = f.dataX(b);
  d_->xRange = std::make_pair(lo, hi);
  d_->changed();
  Q_EMIT xRangeChanged(lo, hi);
}

void PlotWidget::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) {
    QWidget::mouseDoubleClickEvent(event);
    return;
  }
  d_->dragging = false;
  resetZoom();
}

void PlotWidget::contextMenuEvent(QContextMenuEvent* event) {
  runChartMenu(*this, event->globalPos());
}

void PlotWidget::resetZoom() {
  d_->xRange.reset();
  d_->changed();
  update();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Q_EMIT xRangeChanged(nan, nan);
}

bool PlotWidget::exportPng(const QString& path) {
  return exportChart(path, ChartFormat::Png);
}

bool PlotWidget::exportChart(const QString& path, ChartFormat format) {
  const ChartPage page{effectiveSize(this), font(),  palette(),
                       logicalDpiY(),       title(), format == ChartFormat::Png ? exports::pngScale() : 1};
  return writeChartFile(*d_, page, path, format);
}

void PlotWidget::leaveEvent(QEvent* event) {
  d_->hovering = false;
  update();
  QWidget::leaveEvent(event);
}

QSize PlotWidget::sizeHint() const {
  return {480, 300};
}
QSize PlotWidget::minimumSizeHint() const {
  return {240, 160};
}

}  // namespace ps::ui
