#include "app/ui/charts/HeatmapWidget.h"

#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/ExportSettings.h"

#include <QFontMetricsF>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {

constexpr int kRows = 128;          // value resolution of the image
constexpr int kMaxColumns = 2000;   // more than this and every other column is dropped
constexpr double kHeadroom = 0.05;  // the value range grows by this much extra, so it is not rebuilt every step
constexpr double kScaleBar = 10;    // the colour scale's width

// Viridis at nine evenly spaced stops, interpolated linearly.
constexpr int kViridis[][3] = {{68, 1, 84},    {71, 44, 122}, {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                               {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};

QRgb viridis(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 8;
  const int i = std::min(static_cast<int>(t), 7);
  const double u = t - i;
  const auto mix = [&](int c) {
    return static_cast<int>(std::lround(kViridis[i][c] * (1 - u) + kViridis[i + 1][c] * u));
  };
  return qRgb(mix(0), mix(1), mix(2));
}

// The value axis both panels share: where it is drawn and its ticks.
struct ValueAxis {
  QRectF area;  // the heatmap's rectangle; the value axis runs up its height
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  QStringList labels;

  double y(double v) const { return area.bottom() - (v - lo) / (hi - lo) * area.height(); }
};

struct Histogram {
  int64_t step = 0;
  double lo = 0, hi = 0;
  std::vector<float> counts;
};

}  // namespace

struct HeatmapWidget::Impl {
  QString title;
  std::vector<Histogram> columns;
  double viewLo = 0, viewHi = 1;  // the image's value range: the union of the ranges seen, plus headroom
  QImage image;                   // kMaxColumns + 1 wide; the first `rendered` columns are up to date
  int rendered = 0;

  // Counts of one histogram redistributed onto the image rows by overlap (row 0 = viewLo).
  std::vector<double> resample(const Histogram& h) const {
    std::vector<double> rows(kRows, 0.0);
    const double span = viewHi - viewLo;
    const auto rowOf = [&](double v) { return (v - viewLo) / span * kRows; };
    const std::size_t n = h.counts.size();
    const double width = (h.hi - h.lo) / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double c = h.counts[i];
      if (!(c > 0) || !std::isfinite(c)) continue;
      const double a = rowOf(h.lo + i * width), b = rowOf(h.lo + (i + 1) * width);
      if (b - a < 1e-9) {  // a point mass (lo == hi) or a bin far thinner than a row
        rows[std::clamp(static_cast<int>(a), 0, kRows - 1)] += c;
        continue;
      }
      for (int r = std::max(0, static_cast<int>(a)); r < kRows && r < b; ++r)
        rows[r] += c * (std::min<double>(b, r + 1) - std::max<double>(a, r)) / (b - a);
    }
    return rows;
  }

  void renderColumn(int x) {
    std::vector<double> rows = resample(columns[static_cast<std::size_t>(x)]);
    double top = 0;
    for (double& v : rows) top = std::max(top, v = std::log1p(v));
    for (int r = 0; r < kRows; ++r) image.setPixel(x, kRows - 1 - r, viridis(top > 0 ? rows[r] / top : 0));
  }

  void bringImageUpToDate() {
    if (image.isNull()) image = QImage(kMaxColumns + 1, kRows, QImage::Format_RGB32);
    for (; rendered < static_cast<int>(columns.size()); ++rendered) renderColumn(rendered);
  }

  struct Areas {
    QRectF heat, latest, scale;
  };
  Areas layOut(QSize size, const QFontMetricsF& fm, double labelW) const;
  void paint(QPainter& p, QSize size, const QFont& font, const QPalette& pal);
  void drawScale(QPainter& p, const QRectF& bar, const QFontMetricsF& fm, const QColor& fg);
  void drawHeat(QPainter& p, const ValueAxis& axis, const QFontMetricsF& fm, const QColor& fg);
  void drawLatest(QPainter& p, const ValueAxis& axis, const QRectF& bars, const QFontMetricsF& fm, const QColor& fg);
};

HeatmapWidget::HeatmapWidget(const QString& title, QWidget* parent) : QWidget(parent), d_(new Impl) {
  d_->title = title;
  setAttribute(Qt::WA_OpaquePaintEvent);
  setToolTip(
      tr("Each step's column is coloured by its bins' counts on a log scale, from an empty bin (dark) to that "
         "step's fullest bin (yellow); the bars on the right are the latest step's histogram."));
}

HeatmapWidget::~HeatmapWidget() {
  delete d_;
}

QString HeatmapWidget::title() const {
  return d_->title;
}

void HeatmapWidget::addHistogram(int64_t step, double lo, double hi, const std::vector<float>& counts) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || counts.empty()) return;  // nothing that can be placed
  if (lo > hi) std::swap(lo, hi);
  Impl& d = *d_;
  if (d.columns.empty()) {
    // The first histogram sets the range (a point mass gets a small one around its value).
    d.viewLo = lo;
    d.viewHi = hi;
    if (hi - lo <= 1e-12 * std::max(1.0, std::fabs(lo))) {
      const double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.05;
      d.viewLo -= pad;
      d.viewHi += pad;
    }
    d.rendered = 0;
  } else if (lo < d.viewLo || hi > d.viewHi) {
    // The union grew past the image's range: widen the side(s) that grew, with headroom, and re-render.
    const double pad = (std::max(hi, d.viewHi) - std::min(lo, d.viewLo)) * kHeadroom;
    if (lo < d.viewLo) d.viewLo = lo - pad;
    if (hi > d.viewHi) d.viewHi = hi + pad;
    d.rendered = 0;
  }
  d.columns.push_back({step, lo, hi, counts});
  if (static_cast<int>(d.columns.size()) > kMaxColumns) {
    // Keep every other column (and always the latest): memory stays bounded, the time axis stays even.
    std::vector<Histogram> kept;
    kept.reserve(d.columns.size() / 2 + 1);
    for (std::size_t i = 0; i < d.columns.size(); i += 2) kept.push_back(std::move(d.columns[i]));
    if (d.columns.size() % 2 == 0) kept.push_back(std::move(d.columns.back()));
    d.columns = std::move(kept);
    d.rendered = 0;
  }
  update();
}

void HeatmapWidget::clear() {
  d_->columns.clear();
  d_->rendered = 0;
  update();
}

QRectF HeatmapWidget::colourScaleArea() const {
  const QFontMetricsF fm(font());
  double labelW = 0;  // as paint() measures the value labels
  double step = 1;
  for (double v : axis::linearTicks(d_->viewLo, d_->viewHi, 4, &step))
    labelW = std::max(labelW, fm.horizontalAdvance(axis::formatTick(v, step)));
  return d_->layOut(size(), fm, labelW).scale;
}

int HeatmapWidget::columnCount() const {
  return static_cast<int>(d_->columns.size());
}

bool HeatmapWidget::exportPng(const QString& path) {
  QSize size = this->size();
  if (!isVisible() || size.width() < 240 || size.height() < 160) size = size.expandedTo(QSize(640, 400));
  const int scale = exports::pngScale();
  QImage out(size * scale, QImage::Format_ARGB32_Premultiplied);
  out.setDevicePixelRatio(scale);
  {
    QPainter p(&out);
    d_->paint(p, size, font(), palette());
  }
  return out.save(path, "PNG");
}

void HeatmapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  d_->paint(p, size(), font(), palette());
}

void HeatmapWidget::Impl::paint(QPainter& p, QSize size, const QFont& font, const QPalette& pal) {
  const QColor bg = pal.color(QPalette::Base), fg = pal.color(QPalette::Text);
  const QFontMetricsF fm(font);
  const QRectF all(QPointF(0, 0), QSizeF(size));
  p.setFont(font);
  p.fillRect(all, bg);
  const double titleH = title.isEmpty() ? 6 : fm.height() + 10;  // as layOut places it
  if (!title.isEmpty()) {
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(fg);
    p.drawText(QRectF(0, 2, size.width(), titleH - 2), Qt::AlignCenter, title);
    p.setFont(font);
  }
  if (columns.empty()) {
    p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 140));
    p.drawText(all, Qt::AlignCenter, QObject::tr("no data yet"));
    return;
  }
  bringImageUpToDate();

  // Value labels (shared by both panels), then the heatmap on the left ~70% and the latest histogram on the right.
  ValueAxis axis;
  double step = 1;
  axis.ticks = axis::linearTicks(viewLo, viewHi, 4, &step);
  double labelW = 0;
  for (double v : axis.ticks) {
    axis.labels << axis::formatTick(v, step);
    labelW = std::max(labelW, fm.horizontalAdvance(axis.labels.back()));
  }
  const Areas a = layOut(size, fm, labelW);
  axis.area = a.heat;
  axis.lo = viewLo;
  axis.hi = viewHi;
  drawHeat(p, axis, fm, fg);
  drawLatest(p, axis, a.latest, fm, fg);
  drawScale(p, a.scale, fm, fg);
}

// Left to right: value labels, the heatmap (~70% of what is left), the latest histogram, the colour scale.
HeatmapWidget::Impl::Areas HeatmapWidget::Impl::layOut(QSize size, const QFontMetricsF& fm, double labelW) const {
  const double titleH = title.isEmpty() ? 6 : fm.height() + 10;
  const double left = labelW + 10, bottom = fm.height() + 8, gap = 12;
  const double scaleW = kScaleBar + 4 + fm.horizontalAdvance(QObject::tr("peak")) + 4;
  const double usable = std::max(20.0, size.width() - left - 10 - 2 * gap - scaleW);
  const double height = std::max(10.0, size.height() - titleH - bottom);
  Areas a;
  a.heat = QRectF(left, titleH, usable * 0.7, height);
  a.latest = QRectF(a.heat.right() + gap, titleH, usable * 0.3, height);
  a.scale = QRectF(a.latest.right() + gap, titleH, kScaleBar, height);
  return a;
}

// What a colour means: each step's column is scaled to its fullest bin, on a log scale (log(1 + count)), so the
// bar runs from an empty bin at the bottom to that step's peak at the top.
void HeatmapWidget::Impl::drawScale(QPainter& p, const QRectF& bar, const QFontMetricsF& fm, const QColor& fg) {
  for (int y = 0; y < int(bar.height()); ++y)
    p.fillRect(QRectF(bar.left(), bar.bottom() - y - 1, bar.width(), 1),
               QColor::fromRgb(viridis((y + 0.5) / bar.height())));
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 90));
  p.drawRect(bar);
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 200));
  const double textX = bar.right() + 4;
  p.drawText(QRectF(textX, bar.top(), fm.horizontalAdvance(QObject::tr("peak")) + 4, fm.height()),
             Qt::AlignLeft | Qt::AlignTop, QObject::tr("peak"));
  p.drawText(QRectF(textX, bar.bottom() - fm.height(), fm.horizontalAdvance(QStringLiteral("0")) + 4, fm.height()),
             Qt::AlignLeft | Qt::AlignBottom, QStringLiteral("0"));
}

// The image of every column in `axis.area`, the value ticks on its left and the first and last steps under it.
void HeatmapWidget::Impl::drawHeat(QPainter& p, const ValueAxis& axis, const QFontMetricsF& fm, const QColor& fg) {
  const QRectF& heat = axis.area;
  p.drawImage(heat, image, QRectF(0, 0, static_cast<double>(columns.size()), kRows));
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 200));
  for (std::size_t i = 0; i < axis.ticks.size(); ++i) {
    const double y = axis.y(axis.ticks[i]);
    p.drawLine(QPointF(heat.left() - 4, y), QPointF(heat.left(), y));
    p.drawText(QRectF(0, y - fm.height() / 2, heat.left() - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               axis.labels[static_cast<qsizetype>(i)]);
  }
  const QRectF under(heat.left(), heat.bottom() + 3, heat.width(), fm.height());
  p.drawText(under, Qt::AlignLeft | Qt::AlignTop, QObject::tr("step %1").arg(columns.front().step));
  if (columns.size() > 1) p.drawText(under, Qt::AlignRight | Qt::AlignTop, QString::number(columns.back().step));
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 90));
  p.drawRect(heat);
}

// The latest histogram as horizontal bars in `bars`, on the heatmap's value axis.
void HeatmapWidget::Impl::drawLatest(QPainter& p, const ValueAxis& axis, const QRectF& bars, const QFontMetricsF& fm,
                                     const QColor& fg) {
  const Histogram& last = columns.back();
  const float maxCount = *std::max_element(last.counts.begin(), last.counts.end());
  const std::size_t n = last.counts.size();
  const double width = (last.hi - last.lo) / static_cast<double>(n);
  const QColor barColour = QColor::fromRgb(viridis(0.35));
  for (std::size_t i = 0; i < n && maxCount > 0; ++i) {
    const float c = last.counts[i];
    if (!(c > 0) || !std::isfinite(c)) continue;
    const double y0 = axis.y(last.lo + i * width), y1 = axis.y(last.lo + (i + 1) * width);
    const double h = std::max(1.0, y0 - y1);  // at least a pixel, also for lo == hi
    // Whole pixels, so neighbouring bars meet without hairline gaps.
    const QRectF bar(bars.left(), y0 - h, bars.width() * c / maxCount, h);
    p.fillRect(bar.toAlignedRect().intersected(bars.toAlignedRect()), barColour);
  }
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 90));
  p.drawLine(bars.topLeft(), bars.bottomLeft());
  p.setPen(QColor(fg.red(), fg.green(), fg.blue(), 200));
  p.drawText(QRectF(bars.left(), bars.bottom() + 3, bars.width(), fm.height()), Qt::AlignLeft | Qt::AlignTop,
             QObject::tr("latest"));
}

QSize HeatmapWidget::sizeHint() const {
  return {480, 300};
}
QSize HeatmapWidget::minimumSizeHint() const {
  return {240, 160};
}

}  // namespace ps::ui
