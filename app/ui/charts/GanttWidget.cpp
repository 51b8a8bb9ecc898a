#include "app/ui/charts/GanttWidget.h"

#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/ExportSettings.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace ps::ui {
namespace {

constexpr double kRowHeight = 20, kTitleHeight = 18, kBandGap = 10, kAxisHeight = 20, kLegendHeight = 22;
constexpr double kRightMargin = 14;

}  // namespace

struct GanttWidget::Impl {
  std::vector<std::pair<QString, QColor>> kinds;
  std::vector<GanttBand> bands;
  bool arrows = true;
  double end = 0;         // the bands' whole range is [0, end]
  double lo = 0, hi = 1;  // in view
  bool dragging = false;
  double dragX = 0, dragLo = 0, dragHi = 0;

  double left(const QFontMetricsF& fm) const {
    double w = 40;
    for (const auto& b : bands)
      for (const auto& r : b.rows) w = std::max(w, fm.horizontalAdvance(r.name));
    return w + 14;
  }
  // The top of a band's first row.
  double rowsTop(size_t band) const {
    double y = kAxisHeight + 4;
    for (size_t b = 0; b < band; ++b) y += kTitleHeight + double(bands[b].rows.size()) * kRowHeight + kBandGap;
    return y + kTitleHeight;
  }
  double bottom() const { return rowsTop(bands.size()) - kTitleHeight; }
};

GanttWidget::GanttWidget(QWidget* parent) : QWidget(parent), d_(new Impl) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

GanttWidget::~GanttWidget() {
  delete d_;
}

void GanttWidget::setKinds(const std::vector<std::pair<QString, QColor>>& kinds) {
  d_->kinds = kinds;
  update();
}

void GanttWidget::setBands(std::vector<GanttBand> bands) {
  d_->bands = std::move(bands);
  d_->end = 0;
  for (const auto& b : d_->bands)
    for (const auto& r : b.rows)
      for (const auto& bar : r.bars) d_->end = std::max(d_->end, bar.end);
  showAll();
  updateGeometry();
}

const std::vector<GanttBand>& GanttWidget::bands() const {
  return d_->bands;
}

void GanttWidget::setArrowsShown(bool shown) {
  d_->arrows = shown;
  update();
}

std::pair<double, double> GanttWidget::range() const {
  return {d_->lo, d_->hi};
}

void GanttWidget::setRange(double lo, double hi) {
  const double end = d_->end > 0 ? d_->end : 1;
  const double span = std::clamp(hi - lo, end * 1e-6, end);
  lo = std::clamp(lo, 0.0, end - span);
  d_->lo = lo, d_->hi = lo + span;
  update();
}

void GanttWidget::zoom(double factor, double at) {
  setRange(at - (at - d_->lo) * factor, at + (d_->hi - at) * factor);
}

void GanttWidget::showAll() {
  d_->lo = 0, d_->hi = d_->end > 0 ? d_->end : 1;
  update();
}

QRectF GanttWidget::barRect(int band, int row, int bar) const {
  const QFontMetricsF fm(font());
  const double left = d_->left(fm), width = std::max(1.0, double(this->width()) - left - kRightMargin);
  const auto& b = d_->bands.at(size_t(band)).rows.at(size_t(row)).bars.at(size_t(bar));
  const double x0 = left + (b.start - d_->lo) / (d_->hi - d_->lo) * width;
  const double x1 = left + (b.end - d_->lo) / (d_->hi - d_->lo) * width;
  const double y = d_->rowsTop(size_t(band)) + row * kRowHeight + 2;
  return QRectF(x0, y, std::max(x1 - x0, 1.0), kRowHeight - 4);
}

GanttWidget::Hit GanttWidget::hitAt(const QPointF& p) const {
  for (size_t band = 0; band < d_->bands.size(); ++band) {
    const double top = d_->rowsTop(band);
    const auto& rows = d_->bands[band].rows;
    const int row = int(std::floor((p.y() - top) / kRowHeight));
    if (p.y() < top || row < 0 || row >= int(rows.size())) continue;
    const auto& bars = rows[size_t(row)].bars;
    for (int i = 0; i < int(bars.size()); ++i)
      if (barRect(int(band), row, i).adjusted(-1, 0, 1, 0).contains(p)) return {int(band), row, i};
  }
  return {};
}

QString GanttWidget::tipAt(const QPointF& p) const {
  const Hit h = hitAt(p);
  if (h.band < 0) return {};
  return d_->bands[size_t(h.band)].rows[size_t(h.row)].bars[size_t(h.bar)].tip;
}

void GanttWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().base());
  const QFontMetricsF fm(font());
  const double left = d_->left(fm), right = double(width()) - kRightMargin, plotWidth = std::max(1.0, right - left);
  const auto xOf = [&](double t) { return left + (t - d_->lo) / (d_->hi - d_->lo) * plotWidth; };
  const QColor text = palette().text().color();
  QColor grid = text;
  grid.setAlpha(40);

  // The time axis along the top, in milliseconds, with faint lines down through the bands.
  double step = 0;
  const auto ticks = axis::linearTicks(d_->lo * 1e3, d_->hi * 1e3, std::max(2, int(plotWidth / 90)), &step);
  p.setPen(text);
  for (double ms : ticks) {
    const double x = xOf(ms / 1e3);
    p.setPen(grid);
    p.drawLine(QPointF(x, kAxisHeight), QPointF(x, d_->bottom()));
    p.setPen(text);
    p.drawText(QRectF(x - 40, 0, 80, kAxisHeight), Qt::AlignCenter, axis::formatTick(ms, step) + " ms");
  }
  p.drawLine(QPointF(left, kAxisHeight), QPointF(right, kAxisHeight));

  for (size_t band = 0; band < d_->bands.size(); ++band) {
    const auto& b = d_->bands[band];
    const double top = d_->rowsTop(band);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(text);
    p.drawText(QRectF(4, top - kTitleHeight, width() - 8, kTitleHeight), Qt::AlignLeft | Qt::AlignVCenter, b.title);
    p.setFont(font());
    for (size_t row = 0; row < b.rows.size(); ++row) {
      const double y = top + double(row) * kRowHeight;
      p.setPen(text);
      p.drawText(QRectF(4, y, left - 10, kRowHeight), Qt::AlignRight | Qt::AlignVCenter, b.rows[row].name);
      p.save();
      p.setClipRect(QRectF(left, y, plotWidth, kRowHeight));
      const auto& bars = b.rows[row].bars;
      for (size_t i = 0; i < bars.size(); ++i) {
        if (bars[i].end < d_->lo || bars[i].start > d_->hi) continue;
        const QRectF r = barRect(int(band), int(row), int(i));
        const QColor fill = bars[i].kind >= 0 && size_t(bars[i].kind) < d_->kinds.size()
                                ? d_->kinds[size_t(bars[i].kind)].second
                                : QColor(Qt::gray);
        p.fillRect(r, fill);
        if (bars[i].outlined) {
          p.setPen(QPen(QColor(214, 39, 40), 1.5));
          p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
        }
      }
      p.restore();
    }
    if (d_->arrows) {  // messages: from the sender's row to the receiver's
      QColor ink = text;
      ink.setAlpha(150);
      p.save();
      p.setClipRect(QRectF(left, top, plotWidth, double(b.rows.size()) * kRowHeight));
      p.setPen(QPen(ink, 1));
      for (const auto& a : b.arrows) {
        if (std::max(a.from, a.to) < d_->lo || std::min(a.from, a.to) > d_->hi) continue;
        const double down = a.toRow > a.fromRow ? 1 : -1;
        const QPointF from(xOf(a.from), top + (a.fromRow + 0.5 + 0.4 * down) * kRowHeight);
        const QPointF to(xOf(a.to), top + (a.toRow + 0.5 - 0.4 * down) * kRowHeight);
        p.drawLine(from, to);
        const QPointF dir = (to - from) / std::max(1.0, std::hypot(to.x() - from.x(), to.y() - from.y()));
        const QPointF side(-dir.y(), dir.x());
        QPainterPath head;
        head.moveTo(to);
        head.lineTo(to - 5 * dir + 2.5 * side);
        head.lineTo(to - 5 * dir - 2.5 * side);
        head.closeSubpath();
        p.fillPath(head, ink);
      }
      p.restore();
    }
  }

  // The legend along the bottom.
  double x = left;
  const double y = double(height()) - kLegendHeight + 4;
  for (const auto& [name, colour] : d_->kinds) {
    p.fillRect(QRectF(x, y + 3, 12, 10), colour);
    p.setPen(text);
    const double w = fm.horizontalAdvance(name);
    p.drawText(QRectF(x + 16, y, w + 4, 16), Qt::AlignLeft | Qt::AlignVCenter, name);
    x += 16 + w + 14;
  }
}

void GanttWidget::wheelEvent(QWheelEvent* event) {
  const QFontMetricsF fm(font());
  const double left = d_->left(fm), plotWidth = std::max(1.0, double(width()) - left - kRightMargin);
  const double at = d_->lo + (event->position().x() - left) / plotWidth * (d_->hi - d_->lo);
  zoom(std::pow(0.8, event->angleDelta().y() / 120.0), std::clamp(at, d_->lo, d_->hi));
  event->accept();
}

void GanttWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  d_->dragging = true;
  d_->dragX = event->position().x(), d_->dragLo = d_->lo, d_->dragHi = d_->hi;
}

void GanttWidget::mouseMoveEvent(QMouseEvent* event) {
  if (!d_->dragging) return;
  const QFontMetricsF fm(font());
  const double plotWidth = std::max(1.0, double(width()) - d_->left(fm) - kRightMargin);
  const double shift = (event->position().x() - d_->dragX) / plotWidth * (d_->dragHi - d_->dragLo);
  setRange(d_->dragLo - shift, d_->dragHi - shift);
}

void GanttWidget::mouseReleaseEvent(QMouseEvent*) {
  d_->dragging = false;
}

void GanttWidget::mouseDoubleClickEvent(QMouseEvent*) {
  showAll();
}

bool GanttWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString tip = tipAt(help->pos());
    if (tip.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(help->globalPos(), tip, this);
    return true;
  }
  return QWidget::event(event);
}

QSize GanttWidget::sizeHint() const {
  return QSize(900, int(d_->bottom() + kLegendHeight + 8));
}

QSize GanttWidget::minimumSizeHint() const {
  return QSize(320, int(d_->bottom() + kLegendHeight + 8));
}

bool GanttWidget::exportPng(const QString& path) {
  const int scale = exports::pngScale();
  QImage image(size() * scale, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(scale);
  render(&image);
  return image.save(path, "PNG");
}

}  // namespace ps::ui
