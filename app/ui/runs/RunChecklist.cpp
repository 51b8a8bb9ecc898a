#include "app/ui/runs/RunChecklist.h"

#include "app/ui/charts/Palette.h"

#include <QPixmap>

namespace ps::ui {

RunChecklist::RunChecklist(QWidget* parent) : QListWidget(parent) {
  setToolTip(tr("Untick a run to hide it from the charts"));
  setTextElideMode(Qt::ElideMiddle);  // a name's end says what differs: keep it
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // elide rather than scroll
  connect(this, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    Q_EMIT runToggled(item->data(Qt::UserRole).toLongLong(), item->checkState() == Qt::Checked);
  });
}

void RunChecklist::setRuns(const std::vector<std::pair<qint64, QString>>& runs, const std::set<qint64>& hidden) {
  const QSignalBlocker block(this);
  clear();
  for (const auto& [id, label] : runs) {
    QPixmap swatch(12, 12);
    swatch.fill(runColor(id));
    auto* item = new QListWidgetItem(QIcon(swatch), label, this);
    item->setToolTip(label);
    item->setData(Qt::UserRole, qlonglong(id));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(hidden.count(id) ? Qt::Unchecked : Qt::Checked);
  }
}

void RunChecklist::setChecked(qint64 id, bool checked) {
  const QSignalBlocker block(this);
  for (int i = 0; i < count(); ++i)
    if (item(i)->data(Qt::UserRole).toLongLong() == id) item(i)->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
}

}  // namespace ps::ui
