#include "app/ui/runs/FlowLayout.h"

#include <QWidget>

#include <algorithm>

namespace ps::ui {

FlowLayout::FlowLayout(QWidget* parent, int spacing) : QLayout(parent), spacing_(spacing) {
  setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) {
  items_.append(item);
}

int FlowLayout::count() const {
  return int(items_.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const {
  return index >= 0 && index < items_.size() ? items_.at(index) : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index) {
  return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}

Qt::Orientations FlowLayout::expandingDirections() const {
  return {};
}

bool FlowLayout::hasHeightForWidth() const {
  return true;
}

int FlowLayout::heightForWidth(int width) const {
  return place(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const {
  QSize size;
  for (const QLayoutItem* item : items_) size = size.expandedTo(item->minimumSize());
  const QMargins m = contentsMargins();
  return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
  int width = 0, height = 0;
  for (const QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    width += item->sizeHint().width() + (width ? spacing_ : 0);
    height = std::max(height, item->sizeHint().height());
  }
  const QMargins m = contentsMargins();
  return {width + m.left() + m.right(), height + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  place(rect, true);
}

// Rows of items at their size hints, each row's items centred on the row's height.
int FlowLayout::place(const QRect& rect, bool apply) const {
  const QRect area = rect.marginsRemoved(contentsMargins());
  int x = area.x(), y = area.y(), rowHeight = 0, rows = 0;
  std::vector<std::pair<QLayoutItem*, int>> row;  // the row's items and their x
  const auto finishRow = [&] {
    if (row.empty()) return;
    ++rows;
    if (apply)
      for (const auto& [item, left] : row) {
        const QSize s = item->sizeHint().boundedTo(QSize(area.width(), rowHeight));
        item->setGeometry(QRect(QPoint(left, y + (rowHeight - s.height()) / 2), s));
      }
    y += rowHeight + spacing_;
    row.clear();
    x = area.x();
    rowHeight = 0;
  };
  for (QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    const QSize s = item->sizeHint();
    if (!row.empty() && x + s.width() > area.right() + 1) finishRow();
    row.emplace_back(item, x);
    x += s.width() + spacing_;
    rowHeight = std::max(rowHeight, s.height());
  }
  finishRow();
  rows_ = rows;
  const QMargins m = contentsMargins();
  return (rows ? y - spacing_ - area.y() : 0) + m.top() + m.bottom();
}

}  // namespace ps::ui
