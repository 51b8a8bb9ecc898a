#pragma once
// ps::ui::ChartLegend: one legend for a set of charts that show the same series (the compare view's runs), as
// experiment trackers show it: above the charts, entries flowing in rows, each with the swatch its series is drawn
// with. Its height follows its width (put it in a scroll area to cap it).
#include "app/ui/charts/PlotWidget.h"

#include <QWidget>

#include <vector>

namespace ps::ui {

class ChartLegend : public QWidget {
  Q_OBJECT
 public:
  explicit ChartLegend(QWidget* parent = nullptr);

  // Every item of `charts`' legends, once per label, in the order they first appear.
  void setItems(const std::vector<PlotWidget*>& charts);
  void setItems(std::vector<LegendItem> items);
  const std::vector<LegendItem>& items() const { return items_; }

  // Where each item is drawn at `width` (widget pixels), and the height that takes.
  std::vector<QRectF> layOut(int width) const;
  int heightForWidth(int width) const override;
  bool hasHeightForWidth() const override { return true; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  std::vector<LegendItem> items_;
};

}  // namespace ps::ui
