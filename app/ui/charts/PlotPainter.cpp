// PlotWidget drawing: axes, markers, series, legend, and (on screen only) the rubber band and the crosshair.
#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ps::ui {

namespace {

// Liang-Barsky: clips segment a-b to r; false when nothing is left.
bool clipSegment(QPointF& a, QPointF& b, const QRectF& r) {
  double t0 = 0, t1 = 1;
  const double dx = b.x() - a.x(), dy = b.y() - a.y();
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x() - r.left(), r.right() - a.x(), a.y() - r.top(), r.bottom() - a.y()};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  const QPointF a0 = a;
  a = a0 + QPointF(dx, dy) * t0;
  b = a0 + QPointF(dx, dy) * t1;
  return true;
}

// Draws a polyline through pixel points, clipped in floating point first: the painter's raster engine mishandles
// coordinates far outside the device (a clamped-away spike can map to 1e9 pixels).
void drawClippedPolyline(QPainter& p, const std::vector<QPointF>& pts, const QRectF& clip) {
  QPolygonF run;
  const auto flush = [&] {
    if (run.size() >= 2) p.drawPolyline(run);
    run.clear();
  };
  for (std::size_t i = 1; i < pts.size(); ++i) {
    QPointF a = pts[i - 1], b = pts[i];
    if (!clipSegment(a, b, clip)) {
      flush();
      continue;
    }
    if (run.isEmpty() || run.last() != a) {
      flush();
      run << a;
    }
    run << b;
  }
  if (pts.size() == 1 && clip.contains(pts[0])) p.drawPoint(pts[0]);  // a lone point still shows
  flush();
}

// The point of a sorted series nearest to x (binary search); nullptr when the series is empty.
const QPointF* nearestByX(const std::vector<QPointF>& pts, double x) {
  if (pts.empty()) return nullptr;
  auto it = std::lower_bound(pts.begin(), pts.end(), x, [](const QPointF& p, double v) { return p.x() < v; });
  if (it == pts.end()) return &pts.back();
  if (it != pts.begin() && std::fabs((it - 1)->x() - x) <= std::fabs(it->x() - x)) --it;
  return &*it;
}

QColor withAlpha(QColor c, int alpha) {
  c.setAlpha(alpha);
  return c;
}

}  // namespace

void PlotPainter::paint(QPainter& p, const PlotFrame& f, QSize size, const QFont& font, const QPalette& pal) {
  const QRectF all(QPointF(0, 0), QSizeF(size));
  Painting g{p, f, QFontMetricsF(font), pal.color(QPalette::Base), pal.color(QPalette::Text)};
  p.setFont(font);
  p.fillRect(all, g.bg);
  paintTitle(g, size, font);
  if (f.empty) {
    p.setPen(withAlpha(g.fg, 140));
    p.drawText(all, Qt::AlignCenter, QObject::tr("no data yet"));
    return;
  }
  paintAxes(g);
  p.save();
  p.setClipRect(f.plot);
  p.setRenderHint(QPainter::Antialiasing, true);
  paintMarkers(g);
  paintBands(g);
  paintSeries(g);
  paintOffScale(g);
  if (pointer_ && pointer_->dragging) paintRubberBand(g, pal.color(QPalette::Highlight));
  if (pointer_ && pointer_->hovering && !pointer_->dragging && f.plot.contains(pointer_->hover)) paintCrosshair(g);
  p.restore();
  paintLegend(g);  // outside the plot area, so outside its clip
}

void PlotPainter::paintTitle(const Painting& g, QSize size, const QFont& font) const {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  if (chart_.title.isEmpty()) return;
  QFont bold = font;
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(g.fg);
  p.drawText(QRectF(0, 2, size.width(), f.titleHeight - 2), Qt::AlignCenter,
             QFontMetricsF(bold).elidedText(chart_.title, Qt::ElideRight, size.width() - 8));
  p.setFont(font);
}

// Grid, ticks and tick labels, the axis labels and the plot's frame.
void PlotPainter::paintAxes(const Painting& g) const {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  const QFontMetricsF& fm = g.fm;
  const QColor& fg = g.fg;
  const QRectF& r = f.plot;
  p.setPen(QPen(withAlpha(fg, 28), 1));
  for (double x : f.xTicks) p.drawLine(QPointF(f.px(x), r.top()), QPointF(f.px(x), r.bottom()));
  for (double y : f.yTicks) p.drawLine(QPointF(r.left(), f.py(y)), QPointF(r.right(), f.py(y)));
  p.setPen(withAlpha(fg, 200));
  // Category labels get the width of their category (elided); numeric ones a fixed box.
  const double labelWidth =
      chart_.categories.isEmpty() ? 120 : std::max(8.0, r.width() / double(chart_.categories.size()) - 4);
  for (qsizetype i = 0; i < f.xTickLabels.size(); ++i) {
    const double x = f.px(f.xTicks[static_cast<std::size_t>(i)]);
    p.drawText(QRectF(x - labelWidth / 2, r.bottom() + 3, labelWidth, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               fm.elidedText(f.xTickLabels[i], Qt::ElideRight, labelWidth));
  }
  for (qsizetype i = 0; i < f.yTickLabels.size(); ++i) {
    const double y = f.py(f.yTicks[static_cast<std::size_t>(i)]);
    p.drawText(QRectF(0, y - fm.height() / 2, r.left() - 5, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               f.yTickLabels[i]);
  }
  // Axis labels: x centred below the tick labels, y rotated along the left edge.
  if (!chart_.xLabel.isEmpty())
    p.drawText(QRectF(r.left(), r.bottom() + fm.height() + 6, r.width(), fm.height()), Qt::AlignCenter, chart_.xLabel);
  if (!chart_.yLabel.isEmpty()) {
    p.save();
    p.translate(2, r.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-r.height() / 2, 0, r.height(), fm.height()), Qt::AlignCenter,
               fm.elidedText(chart_.yLabel, Qt::ElideRight, r.height()));
    p.restore();
  }
  p.setPen(QPen(withAlpha(fg, 90), 1));
  p.drawRect(r);
}

// Markers: dashed vertical lines, labels reading downwards from the top, right of the line (as laid out).
void PlotPainter::paintMarkers(const Painting& g) const {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  const QFontMetricsF& fm = g.fm;
  const QColor &bg = g.bg, &fg = g.fg;
  const QRectF& r = g.f.plot;
  p.setPen(QPen(withAlpha(fg, 130), 1, Qt::DashLine));
  for (const Marker& m : chart_.markers) {
    if (!(m.x >= f.x0 && m.x <= f.x1)) continue;
    const double x = f.px(m.x);
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
  }
  for (const MarkerLabel& label : f.markerLabels) {
    p.save();
    p.translate(label.x, r.top() + label.along);
    p.rotate(90);  // local +x points down the line, local -y to its right
    const QRectF box(0, -fm.height() - 2, label.box.height(), fm.height());
    p.fillRect(box, withAlpha(bg, 170));
    p.setPen(withAlpha(fg, 220));
    p.drawText(box, Qt::AlignCenter, label.text);
    p.restore();
  }
}

// Bands first, under everything: the polygon along one line and back along the other.
void PlotPainter::paintBands(const Painting& g) const {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  for (std::size_t i = 0; i < chart_.series.size(); ++i) {
    const PlotSeries& s = chart_.series[i];
    const auto other = s.style.fillTo.isEmpty() ? chart_.index.constEnd() : chart_.index.constFind(s.style.fillTo);
    if (other == chart_.index.constEnd() || f.lines[i].empty() || f.lines[std::size_t(*other)].empty()) continue;
    QPolygonF band;
    for (const QPointF& d : f.lines[i]) band << QPointF(f.px(d.x()), f.py(f.ty(d.y())));
    const auto& back = f.lines[std::size_t(*other)];
    for (auto d = back.rbegin(); d != back.rend(); ++d) band << QPointF(f.px(d->x()), f.py(f.ty(d->y())));
    p.setPen(Qt::NoPen);
    p.setBrush(withAlpha(s.style.color, 45));
    p.drawPolygon(band);
    p.setBrush(Qt::NoBrush);
  }
}

// Series: faint lines first so that the lines drawn over them stay readable.
void PlotPainter::paintSeries(const Painting& g) const {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  const QRectF clip = g.f.plot.adjusted(-4, -4, 4, 4);
  std::vector<QPointF> pixels;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < chart_.series.size(); ++i) {
      const PlotSeries& s = chart_.series[i];
      if (s.style.faint != (pass == 0)) continue;
      QColor c = s.style.color;
      if (s.style.faint && c.alpha() == 255) c.setAlpha(70);
      if (s.style.bars) {
        const double half = 0.3 * std::fabs(f.px(1) - f.px(0)), base = f.py(f.ty(chart_.logY ? f.fromTy(f.y0) : 0.0));
        p.setPen(QPen(c.darker(130), 1));
        p.setBrush(withAlpha(c, std::min(c.alpha(), 210)));
        for (const QPointF& d : s.points) {
          if (!std::isfinite(d.y())) continue;
          const double x = f.px(d.x()), top = f.py(f.ty(d.y()));
          p.drawRect(QRectF(QPointF(x - half, std::min(top, base)), QPointF(x + half, std::max(top, base))));
        }
        p.setBrush(Qt::NoBrush);
        continue;
      }
      if (s.style.scatter) {
        p.setPen(QPen(c.darker(130), 1));
        p.setBrush(withAlpha(c, std::min(c.alpha(), 200)));
        for (const QPointF& d : s.points) {
          if (!(d.x() >= f.x0 && d.x() <= f.x1) || !std::isfinite(d.y())) continue;
          const QPointF q(f.px(d.x()), f.py(f.ty(d.y())));
          if (clip.contains(q)) p.drawEllipse(q, 3, 3);
        }
        p.setBrush(Qt::NoBrush);
        continue;
      }
      // A cosmetic pen of width 1 takes the raster engine's fast line path; wider pens go through QStroker,
      // which computes a join angle (atan2) per vertex and made a live chart cost ~15 ms per paint.
      QPen pen(c, 1.0, s.style.dashed ? Qt::DashLine : Qt::SolidLine);
      pen.setCosmetic(true);
      p.setPen(pen);
      pixels.clear();
      for (const QPointF& d : f.lines[i]) pixels.emplace_back(f.px(d.x()), f.py(f.ty(d.y())));
      drawClippedPolyline(p, pixels, clip);
      // Sparse series (evaluations every few hundred steps) get a dot per point, so a lone point is visible.
      if (!s.style.faint && pixels.size() <= 60) {
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        for (const QPointF& q : pixels)
          if (clip.contains(q)) p.drawEllipse(q, 2.5, 2.5);
        p.setBrush(Qt::NoBrush);
      }
    }
  }
}

// Points outside the y range (outliers left out of the scale): a small triangle on the edge, pointing their way.
void PlotPainter::paintOffScale(const Painting& g) const {
  if (g.f.offScale.empty()) return;
  QPainter& p = g.p;
  p.setPen(Qt::NoPen);
  p.setBrush(withAlpha(g.fg, 150));
  for (const QPointF& at : g.f.offScale) {
    const double toward = at.y() <= g.f.plot.top() ? -1 : 1;  // up at the top edge, down at the bottom
    const double tip = at.y() + toward, base = at.y() - toward * 7;
    p.drawPolygon(QPolygonF{QPointF(at.x(), tip), QPointF(at.x() - 4, base), QPointF(at.x() + 4, base)});
  }
  p.setBrush(Qt::NoBrush);
}

void paintSwatch(QPainter& p, const SeriesStyle& st, const QRectF& box) {
  const double mid = box.center().y(), left = box.left();
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(st.color, 2.5, st.dashed ? Qt::DashLine : Qt::SolidLine));
  if (st.bars) {
    p.fillRect(QRectF(left + kSwatchWidth / 2 - 5, mid - 5, 10, 10), st.color);
  } else if (st.scatter) {
    p.setBrush(st.color);
    p.drawEllipse(QPointF(left + kSwatchWidth / 2, mid), 3, 3);
  } else {
    p.drawLine(QPointF(left, mid), QPointF(left + kSwatchWidth, mid));
  }
  p.restore();
}

// Legend: the entries laid out below the x axis, each a swatch drawn as its series is and the label.
void PlotPainter::paintLegend(const Painting& g) const {
  QPainter& p = g.p;
  for (const LegendEntry& e : g.f.legend) {
    if (e.series >= 0) paintSwatch(p, chart_.series[std::size_t(e.series)].style, e.box);
    p.setPen(e.series >= 0 ? g.fg : withAlpha(g.fg, 160));
    const QRectF text = e.series >= 0 ? e.box.adjusted(kSwatchWidth + 6, 0, 0, 0) : e.box;
    p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, e.text);
  }
}

// The rubber band of a drag that will zoom to its x range.
void PlotPainter::paintRubberBand(const Painting& g, const QColor& highlight) const {
  const QRectF& r = g.f.plot;
  const QRectF band(QPointF(std::min(pointer_->dragFrom, pointer_->dragTo), r.top()),
                    QPointF(std::max(pointer_->dragFrom, pointer_->dragTo), r.bottom()));
  g.p.fillRect(band, withAlpha(highlight, 60));
  g.p.setPen(QPen(highlight, 1));
  g.p.drawRect(band);
}

// What the crosshair lists at data x: for every listed line series that has data there (within a few pixels of its
// first and last points: no evaluation before the first one), its nearest point, highest first.
std::vector<CrosshairReading> crosshairReadings(PlotData& chart, const PlotFrame& f, double x) {
  std::vector<CrosshairReading> readings;
  for (PlotSeries& s : chart.series) {
    if (!s.style.legend || s.style.scatter || s.style.bars) continue;  // scatter points are unordered in x
    s.ensureSorted();
    if (s.points.empty() || f.px(x) < f.px(s.points.front().x()) - 4 || f.px(x) > f.px(s.points.back().x()) + 4)
      continue;
    const QPointF* q = nearestByX(s.points, x);
    if (q) readings.push_back({*q, s.label, s.style.color});
  }
  // Highest first, as the lines stand at this x; values that are not numbers last.
  std::stable_sort(readings.begin(), readings.end(), [](const CrosshairReading& a, const CrosshairReading& b) {
    return std::isnan(b.point.y()) ? !std::isnan(a.point.y()) : a.point.y() > b.point.y();
  });
  return readings;
}

QString crosshairHeader(const PlotData& chart, double x) {
  return QStringLiteral("%1: %2").arg(chart.xLabel.isEmpty() ? QStringLiteral("x") : chart.xLabel,
                                      axis::formatValue(x));
}

// Crosshair: a vertical line and the readings beside the cursor, inside the plot area.
void PlotPainter::paintCrosshair(const Painting& g) {
  QPainter& p = g.p;
  const PlotFrame& f = g.f;
  const QFontMetricsF& fm = g.fm;
  const QColor &bg = g.bg, &fg = g.fg;
  const QRectF& r = g.f.plot;
  const double x = f.dataX(pointer_->hover.x());
  p.setPen(QPen(withAlpha(fg, 120), 1));
  p.drawLine(QPointF(pointer_->hover.x(), r.top()), QPointF(pointer_->hover.x(), r.bottom()));
  QStringList lines{crosshairHeader(chart_, x)};
  std::vector<QColor> colours{QColor(Qt::transparent)};
  for (const CrosshairReading& reading : crosshairReadings(chart_, f, x)) {
    const QPointF& q = reading.point;
    lines << QStringLiteral("%1: %2").arg(fm.elidedText(reading.label, Qt::ElideMiddle, 200), axis::formatValue(q.y()));
    colours.push_back(reading.colour);
    if (std::isfinite(q.y())) {
      p.setPen(QPen(reading.colour, 1.5));
      p.setBrush(bg);
      p.drawEllipse(QPointF(f.px(q.x()), f.py(f.ty(q.y()))), 3, 3);
      p.setBrush(Qt::NoBrush);
    }
  }
  double w = 0;
  for (const QString& l : lines) w = std::max(w, fm.horizontalAdvance(l));
  const double row = fm.height() + 1;
  // Beside the cursor (left of it near the right edge), kept inside the plot vertically.
  QRectF box(pointer_->hover.x() + 12, pointer_->hover.y() + 12, w + 24, lines.size() * row + 8);
  if (box.right() > r.right()) box.moveRight(pointer_->hover.x() - 12);
  if (box.left() < r.left()) box.moveLeft(r.left());  // a wide box on a narrow chart: still inside it
  if (box.bottom() > r.bottom()) box.moveBottom(std::max(r.bottom(), r.top() + box.height()));
  if (box.top() < r.top()) box.moveTop(r.top());
  p.setPen(QPen(withAlpha(fg, 80), 1));
  p.setBrush(withAlpha(bg, 225));
  p.drawRoundedRect(box, 3, 3);
  for (int i = 0; i < lines.size(); ++i) {
    const double y = box.top() + 4 + i * row;
    if (colours[i].alpha() > 0) p.fillRect(QRectF(box.left() + 5, y + row / 2 - 4, 8, 8), colours[i]);
    p.setPen(fg);
    p.drawText(QRectF(box.left() + 18, y, w + 4, row), Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
  }
}

}  // namespace ps::ui
