#pragma once
// ps::ui::PlotWidget: the lab's line/scatter chart. This folder (app/ui/charts) is the one chart adapter of the
// app: panels describe series, markers and axes here and never draw themselves. It is painted with QPainter
// rather than Qt Charts (deprecated from Qt 6.10), because it needs what Qt Charts makes awkward: labelled
// vertical markers, a crosshair with every series' value, linked zoom, and per-pixel decimation of long series.
//
// - Keeps the full data; every paint decimates the visible x range to min/max per pixel column (Decimate.h).
// - Line series must be sorted by x; scatter series may be in any order.
// - Autoscale ignores outliers of dense series (a lone spike does not flatten the rest) and marks them at the edge,
//   but always shows every point of a sparse series (evaluations among training steps); setIgnoreOutliers(false)
//   shows every point. Log y clamps zeros and negatives.
// - Drag horizontally to zoom x, double-click to reset; zoom changes emit xRangeChanged for linked charts.
// - The legend is laid out below the plot, never over data; the crosshair box lists every series at the pointer's x,
//   highest value first.
// - Right-click: save this one chart (PNG, or SVG and PDF as vectors for papers), toggle log y and ignoring
//   outliers, reset the zoom.
// - Only paints when something changed (update() coalesces); callers may append at any rate.
#include <QColor>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

namespace ps::ui {

struct SeriesStyle {
  QColor color = QColor(31, 119, 180);
  bool faint = false;    // drawn thin and translucent (the raw line behind a smoothed one)
  bool dashed = false;
  bool scatter = false;  // points, no line; not decimated
  bool bars = false;     // one bar per point, from 0 up to y, 0.6 of a category wide (see setCategories)
  bool legend = true;    // listed in the legend and the crosshair box
  // A band: the area between this line and the line of the series with this id is filled in this series' colour,
  // translucent and under every line (a group's min–max around its mean).
  QString fillTo;
};

// A file name stem for a chart's PNG: its title lower-cased, runs of other characters as '-', "chart" if empty.
QString chartFileStem(const QString& title);

// What a chart is saved as: a bitmap, or vectors drawn by the same painter (text stays text, lines stay lines).
enum class ChartFormat { Png, Svg, Pdf };
QString chartSuffix(ChartFormat format);                        // "png", "svg", "pdf"
std::optional<ChartFormat> chartFormatOf(const QString& path);  // by the file's suffix, any case

// One series as a legend names it.
struct LegendItem {
  QString label;
  SeriesStyle style;
};

struct Marker {
  double x = 0;
  QString label;
};

class PlotWidget : public QWidget {
  Q_OBJECT
 public:
  explicit PlotWidget(const QString& title, QWidget* parent = nullptr);
  ~PlotWidget() override;

  QString title() const;
  void setAxisLabels(const QString& x, const QString& y);
  void setLogY(bool on);
  bool logY() const;
  // A log x axis (decades, or 1-2-5 over a narrow range): for positive x, as bandwidths; not for category axes.
  void setLogX(bool on);
  bool logX() const;
  void setIgnoreOutliers(bool on);  // on by default
  bool ignoreOutliers() const;
  // A category axis: x = 0, 1, ... are labelled with these names (bar charts); empty: a numeric x axis.
  void setCategories(const QStringList& names);

  // Adds or replaces the series `id` (its label is shown in the legend).
  void setSeries(const QString& id, const QString& label, std::vector<QPointF> points, const SeriesStyle& style);
  // Appends to an existing series (creates it with a default colour otherwise). Cheap: for live data.
  void appendPoint(const QString& id, const QPointF& point);
  void removeSeries(const QString& id);
  bool hasSeries(const QString& id) const;
  void clear();  // series and markers

  void addMarker(const Marker& marker);  // a labelled vertical line at x
  void setMarkers(std::vector<Marker> markers);
  const std::vector<Marker>& markers() const;

  int seriesCount() const;
  QStringList legendLabels() const;           // the labels the legend lists, in order
  std::vector<LegendItem> legendItems() const;  // the same, with how each series is drawn
  // The legend sits below the plot area, flowing in up to three rows ("+N more" beyond); off where the series are
  // named elsewhere (the compare view's one legend for all its charts).
  void setLegendVisible(bool on);
  bool legendVisible() const;
  // Where the plot area and each legend entry are at the widget's current size (widget pixels).
  QRectF plotArea() const;
  std::vector<QRectF> legendBoxes() const;
  std::vector<QRectF> markerLabelBoxes() const;  // the markers' labels shown, in x order
  // What the crosshair box says with the pointer at widget x `pixelX`: the x in the axis's words, then each series
  // with data there, highest first ("label: value").
  QStringList crosshairLines(double pixelX) const;
  int pointCount() const;                     // over all series
  int pointCount(const QString& id) const;
  std::vector<QPointF> points(const QString& id) const;

  // Visible x range; nullopt = fit the data. Setting it does not emit xRangeChanged.
  void setXRange(std::optional<std::pair<double, double>> range);
  // Fits the data again as the user does (double-click, the menu): emits xRangeChanged(NaN, NaN) for linked charts.
  void resetZoom();
  std::optional<std::pair<double, double>> xRange() const;
  std::pair<double, double> visibleYRange() const;  // after autoscale, in data units
  int offScaleMarks() const;  // points outside the y range, marked at its edges (one per pixel column and edge)

  bool exportPng(const QString& path);  // renders the chart as it is now; false if the file cannot be written
  // The chart as it is now, in `format` (writeChartFile): SVG and PDF at the chart's size, with its fonts at their
  // on-screen size. False if the file cannot be written.
  bool exportChart(const QString& path, ChartFormat format);

  // Seconds spent in paintEvent by every PlotWidget of the process so far: what a live view paces its redraws by.
  static double paintSecondsTotal();
  static long long paintCountTotal();

 Q_SIGNALS:
  void xRangeChanged(double lo, double hi);  // user zoom; NaN, NaN after a reset to fit

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;  // save this chart, log y, reset zoom
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 private:
  struct Impl;
  Impl* d_;
};

}  // namespace ps::ui
