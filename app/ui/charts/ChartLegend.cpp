#include "app/ui/charts/ChartLegend.h"

#include "app/ui/charts/PlotWidgetImpl.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {
constexpr double kGap = 16, kMargin = 4;
}  // namespace

ChartLegend::ChartLegend(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void ChartLegend::setItems(const std::vector<PlotWidget*>& charts) {
  std::vector<LegendItem> items;
  for (const PlotWidget* chart : charts)
    for (LegendItem& item : chart->legendItems())
      if (!item.label.isEmpty() &&
          std::none_of(items.begin(), items.end(), [&](const LegendItem& i) { return i.label == item.label; }))
        items.push_back(std::move(item));
  setItems(std::move(items));
}

void ChartLegend::setItems(std::vector<LegendItem> items) {
  items_ = std::move(items);
  setMinimumHeight(heightForWidth(width()));
  updateGeometry();
  update();
}

std::vector<QRectF> ChartLegend::layOut(int width) const {
  const QFontMetricsF fm(font());
  const double usable = std::max(1.0, width - 2 * kMargin);
  std::vector<double> widths;
  for (const LegendItem& item : items_)
    widths.push_back(std::min(usable, kSwatchWidth + 6 + fm.horizontalAdvance(item.label)));
  std::vector<QRectF> boxes = flowRows(widths, usable, fm.height() + 4, kGap);
  for (QRectF& b : boxes) b.translate(kMargin, kMargin);
  return boxes;
}

int ChartLegend::heightForWidth(int width) const {
  const auto boxes = layOut(width);
  return boxes.empty() ? 0 : int(std::ceil(boxes.back().bottom() + kMargin));
}

QSize ChartLegend::sizeHint() const {
  return {400, heightForWidth(std::max(width(), 400))};
}

QSize ChartLegend::minimumSizeHint() const {
  return {100, 0};
}

void ChartLegend::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const int needed = heightForWidth(width());
  if (minimumHeight() != needed) setMinimumHeight(needed);  // inside a scroll area: scroll to the rest
}

void ChartLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QFontMetricsF fm(font());
  const auto boxes = layOut(width());
  p.setPen(palette().color(QPalette::WindowText));
  for (std::size_t i = 0; i < items_.size(); ++i) {
    paintSwatch(p, items_[i].style, boxes[i]);
    p.setPen(palette().color(QPalette::WindowText));
    const QRectF text = boxes[i].adjusted(kSwatchWidth + 6, 0, 0, 0);
    p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(items_[i].label, Qt::ElideMiddle, text.width()));
  }
}

}  // namespace ps::ui
