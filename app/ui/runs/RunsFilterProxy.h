#pragma once
// ps::ui::RunsFilterProxy: the runs table's filter and sort. The filter text matches (case-insensitively, as a
// plain substring) the name, tags, notes, status and either direction's method; sorting uses RunsModel::SortRole
// so numbers sort as numbers, and empty cells go last whichever way the column is sorted.
#include <QSortFilterProxyModel>

namespace ps::ui {

class RunsFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit RunsFilterProxy(QObject* parent = nullptr);

  void setFilterText(const QString& text);
  QString filterText() const { return text_; }

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString text_;
};

}  // namespace ps::ui
