#include "app/ui/runs/RunsFilterProxy.h"

#include "app/ui/runs/RunsModel.h"

namespace ps::ui {

RunsFilterProxy::RunsFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(RunsModel::SortRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
  setDynamicSortFilter(true);
}

void RunsFilterProxy::setFilterText(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed == text_) return;
  text_ = trimmed;
  invalidateFilter();
}

bool RunsFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (text_.isEmpty()) return true;
  static const RunColumn searched[] = {RunColumn::Name,   RunColumn::Tags,      RunColumn::Notes,
                                       RunColumn::Status, RunColumn::FwdMethod, RunColumn::BwdMethod};
  const QAbstractItemModel* source = sourceModel();
  for (RunColumn c : searched) {
    const QString cell = source->data(source->index(sourceRow, int(c), sourceParent), Qt::DisplayRole).toString();
    if (cell.contains(text_, Qt::CaseInsensitive)) return true;
  }
  return false;
}

bool RunsFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant l = left.data(sortRole()), r = right.data(sortRole());
  // Empty cells last in both orders: the view reverses lessThan for a descending sort, so flip them there.
  if (!l.isValid() || !r.isValid()) {
    if (l.isValid() == r.isValid()) return false;
    const bool emptyIsGreater = sortOrder() == Qt::AscendingOrder;
    return l.isValid() ? emptyIsGreater : !emptyIsGreater;
  }
  if (l.userType() == QMetaType::Double && r.userType() == QMetaType::Double) return l.toDouble() < r.toDouble();
  return QString::compare(l.toString(), r.toString(), sortCaseSensitivity()) < 0;
}

}  // namespace ps::ui
