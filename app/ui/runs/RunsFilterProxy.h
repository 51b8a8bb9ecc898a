#pragma once
// ps::ui::RunsFilterProxy: the runs table's filter and sort. The filter is the one `pipesqueeze-cli runs list
// --filter` takes (engine/runs/store/RunFilter.h): words search the name, tags, notes, status and methods, and
// field terms compare settings and results (status:finished k<0.05 tag:suite-1). A filter that does not parse hides
// nothing and says why (filterError). Sorting uses RunsModel::SortRole so numbers sort as numbers, and empty cells go
// last whichever way the column is sorted.
#include "engine/runs/store/RunFilter.h"

#include <QSortFilterProxyModel>

namespace ps::ui {

class RunsFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit RunsFilterProxy(QObject* parent = nullptr);

  void setFilterText(const QString& text);
  QString filterText() const { return text_; }
  // Why the filter text does not parse ("" when it does).
  QString filterError() const { return error_; }

 Q_SIGNALS:
  void filterErrorChanged(const QString& error);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString text_, error_;
  RunFilter filter_;
};

}  // namespace ps::ui
