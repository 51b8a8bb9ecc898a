#pragma once
// Private to PlotWidget: what a chart shows (PlotData), its layout at one size (layOutPlot, PlotFrame.cpp), its drawing
// (PlotPainter, PlotPainter.cpp), its files (writeChartFile, PlotExport.cpp), its context menu (runChartMenu,
// PlotMenu.cpp) and the widget's own state (PlotWidget.cpp: data and pointer). Not part of the chart adapter's
// interface.
#include "app/ui/charts/PlotWidget.h"

#include <QFont>
#include <QFontMetricsF>
#include <QHash>
#include <QPalette>
#include <QRectF>
#include <QStringList>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

class QPainter;

namespace ps::ui {

struct PlotSeries {
  QString id;
  QString label;
  std::vector<QPointF> points;
  SeriesStyle style;
  bool sorted = true;  // line series only; an out-of-order append is sorted lazily before the next use
  // Bounds of the finite points, kept up to date on append so that autoscale never scans the data for them.
  bool any = false;
  double xMin = std::numeric_limits<double>::infinity();
  double xMax = -std::numeric_limits<double>::infinity();
  double minPositive = std::numeric_limits<double>::infinity();  // smallest y > 0 (log-y clamping)

  void include(const QPointF& p);
  void recomputeBounds();
  void ensureSorted();
};

// One entry of a chart's legend, laid out below the plot area: a series (by index) or, with more series than fit,
// the last entry "+N more" (series -1) whose names the crosshair box lists.
struct LegendEntry {
  int series = -1;
  QRectF box;  // swatch and text, widget pixels
  QString text;
};

// A marker's label, laid out: it reads downwards along the marker's line from `along` pixels below the plot's top,
// right of the line. Labels of markers closer than a label's height start below the one before, so two changes at
// one step (a pause and its resume) both read.
struct MarkerLabel {
  double x = 0;      // the line, widget pixels
  double along = 0;  // where the label starts, pixels below the plot area's top
  QString text;      // elided to the room left
  QRectF box;        // what it covers, widget pixels
};

// Everything a paint (or a mouse event) needs for one widget size: the plot rectangle, the ranges, the ticks and
// the decimated lines. Cached per size and data generation, so mouse moves do not redo the decimation.
struct PlotFrame {
  bool empty = true;  // no finite point in any series
  QRectF plot;        // the plot area in widget pixels
  double titleHeight = 0;
  double x0 = 0, x1 = 1;  // visible x range, data units (positive on a log axis)
  bool logX = false;
  double y0 = 0, y1 = 1;  // visible y range, transformed units (log10 of the value on a log axis)
  bool logY = false;
  double logFloor = 1e-12;                  // what values <= 0 are drawn as on a log axis
  std::vector<std::vector<QPointF>> lines;  // per series (same order), decimated, data units; empty for scatter
  std::vector<double> xTicks, yTicks;       // data x; transformed y
  QStringList xTickLabels, yTickLabels;
  std::vector<LegendEntry> legend;  // below the x axis, never over the plot area
  std::vector<QPointF> offScale;    // marks on the plot's top or bottom edge for points outside the y range
  std::vector<MarkerLabel> markerLabels;  // the visible markers' labels

  double ty(double y) const { return logY ? std::log10(y > 0 ? y : logFloor) : y; }
  double fromTy(double t) const { return logY ? std::pow(10.0, t) : t; }
  // x on the axis's scale: log10 of it on a log axis (where 0 and below sit at the range's far left).
  double tx(double x) const { return logX ? std::log10(x > 0 ? x : x0 * 1e-3) : x; }
  double fromTx(double t) const { return logX ? std::pow(10.0, t) : t; }
  double px(double x) const { return plot.left() + (tx(x) - tx(x0)) / (tx(x1) - tx(x0)) * plot.width(); }
  double py(double t) const { return plot.bottom() - (t - y0) / (y1 - y0) * plot.height(); }
  double dataX(double pixelX) const {
    return fromTx(tx(x0) + (pixelX - plot.left()) / plot.width() * (tx(x1) - tx(x0)));
  }
};

// The size a chart is laid out at when it has none worth the name yet (never shown, or squeezed): its own once shown
// and big enough, else at least 640 x 400.
QSize effectiveSize(const QWidget* w);

// What a chart shows: titles, series, markers and zoom. PlotWidget edits it; layOutPlot and PlotPainter read it.
struct PlotData {
  QString title, xLabel, yLabel;
  bool logY = false;
  bool logX = false;               // a log x axis: for positive x only; lines there are not decimated (few points)
  bool legendShown = true;         // off where the chart's series are named elsewhere (a shared legend)
  bool ignoreOutliers = true;      // the y range trims a dense series' outliers (marked at the edge)
  QStringList categories;          // a category x axis when not empty
  std::vector<PlotSeries> series;  // in insertion order (drawing and legend order)
  QHash<QString, int> index;       // id -> position in `series`
  std::vector<Marker> markers;
  std::optional<std::pair<double, double>> xRange;
  std::uint64_t generation = 0;  // counts changes: a laid-out frame is valid for one generation

  PlotSeries* find(const QString& id);
  void reindex();
  void changed() { ++generation; }
};

// The pointer over a chart on screen: where it hovers, and the x range it drags out (pixels).
struct PlotPointer {
  bool hovering = false;
  QPointF hover;
  bool dragging = false;
  double dragFrom = 0, dragTo = 0;
};

// Lays a chart out at one size (PlotFrame.cpp): the ranges (zoom or autoscale), the ticks and the decimated lines.
// Sorts the line series appended out of order.
PlotFrame layOutPlot(PlotData& chart, QSize size, const QFont& font);

// Draws a laid-out chart, one function per element, in the order they are drawn (PlotPainter.cpp). With a pointer
// (on screen) it adds the rubber band of a drag and the crosshair; exports have none.
class PlotPainter {
 public:
  PlotPainter(PlotData& chart, const PlotPointer* pointer) : chart_(chart), pointer_(pointer) {}
  void paint(QPainter& p, const PlotFrame& f, QSize size, const QFont& font, const QPalette& palette);

 private:
  // The painter, the frame (geometry and ticks), the font's metrics and the palette's two colours every element uses.
  struct Painting {
    QPainter& p;
    const PlotFrame& f;
    const QFontMetricsF fm;
    const QColor bg, fg;
  };
  void paintTitle(const Painting& g, QSize size, const QFont& font) const;
  void paintAxes(const Painting& g) const;
  void paintMarkers(const Painting& g) const;
  void paintBands(const Painting& g) const;
  void paintSeries(const Painting& g) const;
  void paintOffScale(const Painting& g) const;
  void paintLegend(const Painting& g) const;
  void paintRubberBand(const Painting& g, const QColor& highlight) const;
  void paintCrosshair(const Painting& g);  // sorts the series it reads

  PlotData& chart_;
  const PlotPointer* pointer_;
};

// One line of the crosshair's box: a series' point nearest the pointer's x.
struct CrosshairReading {
  QPointF point;
  QString label;
  QColor colour;
};
std::vector<CrosshairReading> crosshairReadings(PlotData& chart, const PlotFrame& f, double x);
QString crosshairHeader(const PlotData& chart, double x);  // "Step: 420", in the x axis's words

// A legend's swatch for a series drawn with `style`: a short line (dashed where the series is), a dot for a scatter,
// a square for bars; centred vertically in `box`, kSwatchWidth wide from its left edge.
constexpr double kSwatchWidth = 18;
void paintSwatch(QPainter& p, const SeriesStyle& style, const QRectF& box);

// Boxes of the given widths flowing left to right across `width` in rows of height `row`, `gap` apart: a box that does
// not fit after another starts the next row. How a chart's legend and a shared legend lay their entries out.
std::vector<QRectF> flowRows(const std::vector<double>& widths, double width, double row, double gap);

// How a chart looks on the page it is written to: its size in pixels, the font and palette it is painted with, the
// resolution that gives text and lines their on-screen size in vector formats, and the document's title.
struct ChartPage {
  QSize size;
  QFont font;
  QPalette palette;
  int dpi = 96;
  QString title;
  int scale = 1;  // a PNG's pixels per on-screen pixel (text and lines scale with it); vector formats ignore it
};

// Writes `chart` laid out on `page` as a PNG, SVG or PDF file, atomically: an existing file stays until the new one is
// whole. False when the file cannot be written.
bool writeChartFile(PlotData& chart, const ChartPage& page, const QString& path, ChartFormat format);

// The chart's context menu at `globalPos` (save this chart, log y, reset the zoom), through the widget's public API.
void runChartMenu(PlotWidget& plot, const QPoint& globalPos);

// The widget's state: its chart, the pointer, and the frame laid out for the last size, font and data generation
// (so pointer moves do not redo the decimation).
struct PlotWidget::Impl : PlotData, PlotPointer {
  std::uint64_t cachedGeneration = ~std::uint64_t(0);
  QSize cachedSize;
  QFont cachedFont;
  PlotFrame cached;

  const PlotFrame& frame(QSize size, const QFont& font);  // cached layOutPlot
  // Sets one of the chart's switches (log axes, the legend, outlier trimming); whether it changed.
  bool set(bool PlotData::*option, bool on) {
    if (this->*option == on) return false;
    this->*option = on;
    changed();
    return true;
  }
};

}  // namespace ps::ui
