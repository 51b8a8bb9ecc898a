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
  QString error;
  try {
    filter_ = RunFilter::parse(text_.toStdString());
  } catch (const FilterError& e) {
    filter_ = RunFilter();  // shows every run while the text is being typed or is wrong
    error = QString::fromStdString(e.what());
  }
  invalidateFilter();
  if (error != error_) {
    error_ = error;
    Q_EMIT filterErrorChanged(error_);
  }
}

bool RunsFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex&) const {
  if (filter_.empty()) return true;
  const auto* model = qobject_cast<const RunsModel*>(sourceModel());
  const RunRow* row = model ? model->row(sourceRow) : nullptr;
  return row && filter_.matches(row->facts);
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
