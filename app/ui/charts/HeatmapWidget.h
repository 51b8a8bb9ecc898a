#pragma once
// ps::ui::HeatmapWidget: histograms over steps (x = step, y = value, colour = log count), next to the latest
// histogram drawn as bars. Histograms may have different [lo, hi] ranges: each column is resampled onto the
// common value range seen so far, and the image is rebuilt when that range grows.
#include <QRectF>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

namespace ps::ui {

class HeatmapWidget : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapWidget(const QString& title, QWidget* parent = nullptr);
  ~HeatmapWidget() override;

  QString title() const;
  // counts[i] covers [lo + i*(hi-lo)/n, lo + (i+1)*(hi-lo)/n). Steps arrive in increasing order.
  void addHistogram(int64_t step, double lo, double hi, const std::vector<float>& counts);
  void clear();
  int columnCount() const;
  // Where the colour scale is drawn at the widget's size: a bar from an empty bin (0) to a step's fullest bin (peak).
  QRectF colourScaleArea() const;
  bool exportPng(const QString& path);

 protected:
  void paintEvent(QPaintEvent* event) override;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 private:
  struct Impl;
  Impl* d_;
};

}  // namespace ps::ui
