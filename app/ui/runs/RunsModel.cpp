#include "app/ui/runs/RunsModel.h"
#include "engine/core/RunSummary.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/Units.h"
#include "engine/core/Metrics.h"

#include <QColor>

#include <algorithm>
#include <map>

namespace ps::ui {

RunsModel::RunsModel(std::shared_ptr<RunStore> store, QObject* parent)
    : QAbstractTableModel(parent), store_(std::move(store)) {}

RunsModel::~RunsModel() = default;

int RunsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kRunColumnCount;
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(rows_.size()) || index.column() >= kRunColumnCount) return QVariant();
  const RunRow& r = rows_[size_t(index.row())];
  const auto column = RunColumn(index.column());
  if (r.info.id == 0 && (column == RunColumn::Visible || column == RunColumn::TimeToTarget))
    return QVariant();  // a run still starting has no colour, tick or figures yet
  if (column == RunColumn::TimeToTarget) {
    const Reached& t = reached(r);
    if (role == Qt::DisplayRole) return t.seconds.isValid() ? humanDuration(t.seconds.toDouble()) : t.why;
    if (role == SortRole) return t.seconds;
    if (role == Qt::ToolTipRole) {
      const QString what = r.languageModel ? tr("perplexity %1 or lower").arg(target_.perplexity)
                                           : tr("accuracy %1% or higher").arg(100 * target_.accuracy);
      const QString network = NetworkControls::describe(target_.network);
      const QString where = network.isEmpty() ? tr("at the run's own network") : tr("at %1").arg(network);
      return tr("Emulated time to %1, %2").arg(what, where) + (t.why.isEmpty() ? QString() : ": " + t.why);
    }
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    return QVariant();
  }
  switch (role) {
    case Qt::DisplayRole:
      return column == RunColumn::Visible ? QVariant() : QVariant(r.display(column));
    case Qt::EditRole:
      if (column == RunColumn::Name) return QString::fromStdString(r.info.name);
      if (column == RunColumn::Tags) return QString::fromStdString(r.info.tags);
      if (column == RunColumn::Notes) return QString::fromStdString(r.info.notes);
      return column == RunColumn::Visible ? QVariant() : QVariant(r.display(column));
    case SortRole:
      if (column == RunColumn::Visible) return isRunVisible(r.info.id) ? 1.0 : 0.0;
      return r.value(column);
    case Qt::DecorationRole:
      return column == RunColumn::Visible ? QVariant(runColor(r.info.id)) : QVariant();
    case Qt::CheckStateRole:
      if (column != RunColumn::Visible) return QVariant();
      return isRunVisible(r.info.id) ? Qt::Checked : Qt::Unchecked;
    case Qt::ToolTipRole:
      if (column == RunColumn::Status && !r.info.status_reason.empty())
        return QString::fromStdString(r.info.status + ": " + r.info.status_reason);
      if (column == RunColumn::Notes || column == RunColumn::Name) return r.display(column);
      if (column == RunColumn::Visible) return runColumnToolTip(column);
      return QVariant();
    case Qt::TextAlignmentRole: {
      const QVariant v = r.value(column);
      if (v.userType() == QMetaType::Double) return int(Qt::AlignRight | Qt::AlignVCenter);
      return QVariant();
    }
    default:
      return QVariant();
  }
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kRunColumnCount) return QVariant();
  if (role == Qt::DisplayRole && RunColumn(section) == RunColumn::TimeToTarget)  // which time, and to what
    return tr("Emulated time to %1 % (ppl %2)").arg(100 * target_.accuracy).arg(target_.perplexity);
  if (role == Qt::DisplayRole) return runColumnTitle(RunColumn(section));
  if (role == Qt::ToolTipRole) return runColumnToolTip(RunColumn(section));
  return QVariant();
}

bool RunsModel::isEditable(RunColumn c) {
  return c == RunColumn::Name || c == RunColumn::Tags || c == RunColumn::Notes;
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
  if (runId(index.row()) == 0) return f;  // a run still starting: nothing to tick or edit yet
  const auto column = RunColumn(index.column());
  if (column == RunColumn::Visible) f |= Qt::ItemIsUserCheckable;
  if (isEditable(column) && !store_->readOnly()) f |= Qt::ItemIsEditable;  // a store only read takes no edits
  return f;
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.row() >= int(rows_.size())) return false;
  RunRow& r = rows_[size_t(index.row())];
  const auto column = RunColumn(index.column());
  if (column == RunColumn::Visible && role == Qt::CheckStateRole) {
    setRunVisible(r.info.id, value.toInt() == Qt::Checked);
    return true;
  }
  if (role != Qt::EditRole || !isEditable(column)) return false;
  const std::string text = value.toString().toStdString();
  const qint64 id = r.info.id;
  try {
    if (column == RunColumn::Name)
      store_->rename(id, text);
    else if (column == RunColumn::Tags)
      store_->setTags(id, text);
    else
      store_->setNotes(id, text);
    // Read back what the store kept (tags are normalised there).
    if (auto info = store_->run(id)) r.info = *info;
  } catch (const std::exception& e) {
    reportError(QStringLiteral("Could not save the %1 of run %2").arg(runColumnTitle(column).toLower()).arg(id), e);
    return false;
  }
  Q_EMIT dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, SortRole, Qt::ToolTipRole});
  Q_EMIT runEdited(id);
  return true;
}

void RunsModel::setStarting(const nlohmann::json& config) {
  const bool had = starting_.has_value();
  if (had) {  // the placeholder is always the first row
    beginRemoveRows(QModelIndex(), 0, 0);
    rows_.erase(rows_.begin());
    starting_.reset();
    endRemoveRows();
  }
  if (config.is_null()) return;
  starting_ = RunRow::starting(config);
  beginInsertRows(QModelIndex(), 0, 0);
  rows_.insert(rows_.begin(), *starting_);
  endInsertRows();
}

qint64 RunsModel::runId(int row) const {
  return row >= 0 && row < int(rows_.size()) ? rows_[size_t(row)].info.id : 0;
}

int RunsModel::rowOf(qint64 id) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].info.id == id) return int(i);
  return -1;
}

const RunRow* RunsModel::row(int row) const {
  return row >= 0 && row < int(rows_.size()) ? &rows_[size_t(row)] : nullptr;
}

QList<qint64> RunsModel::visibleIds() const {
  QList<qint64> ids;
  for (const auto& r : rows_)
    if (r.info.id != 0 && isRunVisible(r.info.id)) ids.push_back(r.info.id);
  return ids;
}

bool RunsModel::isRunVisible(qint64 id) const {
  return hidden_.count(id) == 0;
}

void RunsModel::setStore(std::shared_ptr<RunStore> store) {
  beginResetModel();
  store_ = std::move(store);
  rows_.clear();
  starting_.reset();
  hidden_.clear();
  endResetModel();
  refresh();
}

void RunsModel::setRunVisible(qint64 id, bool visible) {
  if (isRunVisible(id) == visible) return;
  if (visible)
    hidden_.erase(id);
  else
    hidden_.insert(id);
  const int r = rowOf(id);
  if (r >= 0) {
    const QModelIndex cell = index(r, int(RunColumn::Visible));
    Q_EMIT dataChanged(cell, cell, {Qt::CheckStateRole, SortRole});
  }
  Q_EMIT visibilityChanged(id, visible);
}

void RunsModel::reportError(const QString& what, const std::exception& e) {
  Q_EMIT errorOccurred(what + QStringLiteral(": ") + QString::fromStdString(e.what()) +
                       QStringLiteral(". Check that the run store file is readable and not locked by another program, "
                                      "then refresh (F5)."));
}

void RunsModel::setTimeTarget(const TimeTarget& target) {
  target_ = target;
  reached_.clear();
  const int c = int(RunColumn::TimeToTarget);
  Q_EMIT headerDataChanged(Qt::Horizontal, c, c);
  if (!rows_.empty()) Q_EMIT dataChanged(index(0, c), index(int(rows_.size()) - 1, c));
}

const RunsModel::Reached& RunsModel::reached(const RunRow& r) const {
  auto it = reached_.find(r.info.id);
  if (it != reached_.end()) return it->second;
  Reached out;
  try {
    const auto t =
        r.languageModel
            ? timeToTarget(*store_, r.info.id, metric::kEvalPerplexity, target_.perplexity, false, target_.network)
            : timeToTarget(*store_, r.info.id, metric::kEvalAccuracy, target_.accuracy, true, target_.network);
    if (t.seconds) out.seconds = *t.seconds;
    out.why = QString::fromStdString(t.why);
  } catch (const std::exception& e) {  // a damaged trace, a store that went away: said in the cell, not thrown
    out.why = QString::fromStdString(e.what());
  }
  return reached_[r.info.id] = out;
}

void RunsModel::refresh() {
  std::vector<RunRow> fresh;
  try {
    std::map<qint64, const RunRow*> previous;
    for (const auto& r : rows_) previous[r.info.id] = &r;
    for (const auto& info : store_->listRuns()) {
      auto it = previous.find(info.id);
      fresh.push_back(RunRow::read(*store_, info, it == previous.end() ? nullptr : it->second));
    }
  } catch (const std::exception& e) {
    reportError(QStringLiteral("Could not read the runs"), e);
    return;
  }
  if (starting_) fresh.insert(fresh.begin(), *starting_);
  std::set<qint64> oldIds, newIds;
  for (const auto& r : rows_) oldIds.insert(r.info.id);
  for (const auto& r : fresh) newIds.insert(r.info.id);
  for (auto it = hidden_.begin(); it != hidden_.end();) it = newIds.count(*it) ? std::next(it) : hidden_.erase(it);
  // A running run reaches further with every refresh, and the refresh where it ends adds its final evaluation.
  std::set<qint64> wasRunning;
  for (const auto& r : rows_)
    if (r.info.status == run_status::kRunning) wasRunning.insert(r.info.id);
  for (const auto& r : fresh)
    if (r.info.status == run_status::kRunning || wasRunning.count(r.info.id)) reached_.erase(r.info.id);

  // The runs both lists have must keep their relative order for row-wise updates; otherwise reset.
  std::vector<qint64> keptOld, keptNew;
  for (const auto& r : rows_)
    if (newIds.count(r.info.id)) keptOld.push_back(r.info.id);
  for (const auto& r : fresh)
    if (oldIds.count(r.info.id)) keptNew.push_back(r.info.id);
  if (keptOld != keptNew) {
    beginResetModel();
    rows_ = std::move(fresh);
    endResetModel();
    return;
  }
  // Remove deleted runs (from the bottom, so row numbers stay valid), then insert new ones where they belong:
  // after step j, rows_[0..j] holds exactly fresh[0..j]'s ids.
  for (int i = int(rows_.size()) - 1; i >= 0; --i) {
    if (newIds.count(rows_[size_t(i)].info.id)) continue;
    beginRemoveRows(QModelIndex(), i, i);
    rows_.erase(rows_.begin() + i);
    endRemoveRows();
  }
  for (size_t j = 0; j < fresh.size(); ++j) {
    if (oldIds.count(fresh[j].info.id)) continue;
    beginInsertRows(QModelIndex(), int(j), int(j));
    rows_.insert(rows_.begin() + long(j), fresh[j]);
    endInsertRows();
  }
  rows_ = std::move(fresh);  // same ids in the same order now; the values may have changed
  if (!rows_.empty()) Q_EMIT dataChanged(index(0, 0), index(int(rows_.size()) - 1, kRunColumnCount - 1));
}

}  // namespace ps::ui
