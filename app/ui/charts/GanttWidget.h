#pragma once
// ps::ui::GanttWidget: rows of bars on a shared time axis, in bands drawn one above the other (a pipeline step's
// lanes as recorded, and the same step under another network beside it), with arrows between rows (messages).
// The mouse wheel zooms around the pointer, dragging pans, a double click shows everything again; hovering a bar
// shows its tooltip. Bars take their colour from their kind (setKinds), listed in a legend.
#include <QColor>
#include <QPointF>
#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

namespace ps::ui {

struct GanttBar {
  double start = 0, end = 0;  // seconds
  int kind = 0;               // index into the kinds
  QString tip;                // shown on hover
  bool outlined = false;      // drawn with a red outline (a bar that needs attention)
};

struct GanttRow {
  QString name;
  std::vector<GanttBar> bars;
};

struct GanttArrow {
  int fromRow = 0, toRow = 0;
  double from = 0, to = 0;  // seconds
};

struct GanttBand {
  QString title;  // "recorded (100 Mbit/s): step 42.3 ms"
  std::vector<GanttRow> rows;
  std::vector<GanttArrow> arrows;
};

class GanttWidget : public QWidget {
  Q_OBJECT
 public:
  explicit GanttWidget(QWidget* parent = nullptr);
  ~GanttWidget() override;

  void setKinds(const std::vector<std::pair<QString, QColor>>& kinds);
  // Replaces the bands and shows their whole time range.
  void setBands(std::vector<GanttBand> bands);
  const std::vector<GanttBand>& bands() const;
  void setArrowsShown(bool shown);

  std::pair<double, double> range() const;  // the time range in view, seconds
  void setRange(double lo, double hi);      // clamped to the bands' range
  void zoom(double factor, double at);      // factor < 1 zooms in, keeping time `at` where it is
  void showAll();

  // The bar under a point of the widget: (band, row, bar), or (-1, -1, -1); and its tooltip (empty for none).
  struct Hit {
    int band = -1, row = -1, bar = -1;
  };
  Hit hitAt(const QPointF& position) const;
  QString tipAt(const QPointF& position) const;
  // Where a bar is drawn at the widget's current size (for tests and tools).
  QRectF barRect(int band, int row, int bar) const;
  bool exportPng(const QString& path);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;  // tooltips
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 private:
  struct Impl;
  Impl* d_;
};

}  // namespace ps::ui
