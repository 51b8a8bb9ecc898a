#pragma once
// ps::ui::RunsModel: the runs table, one row per run in the store (newest first), columns as in RunColumn.
//
// - Column 0 carries the run's colour (DecorationRole, the same colour as in every chart) and a visibility
//   checkbox (CheckStateRole); the flags survive refreshes and are what the compare view draws.
// - Name, tags and notes are editable; edits are written to the store at once.
// - Qt::UserRole (SortRole) is the typed sort value: a double for numbers, a QString for text, an invalid
//   QVariant where the cell is empty (RunsFilterProxy sorts those last in both orders).
// - refresh() re-reads the store. Rows that stay keep their place (dataChanged), new and deleted runs are
//   inserted and removed row by row, so a selection survives the periodic refresh during a live run.
// - The time-to-target column is the emulated time at which a run's evaluation first reaches the target of
//   setTimeTarget(), at its network (engine/runs/trace/Retime.h); read when shown, kept until the target changes
//   (a running run's until the next refresh).
// - Store failures never throw out of the model: they are reported through errorOccurred with what to do.
#include "app/ui/runs/RunRow.h"
#include "engine/runs/trace/Retime.h"

#include <QAbstractTableModel>
#include <QList>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace ps::ui {

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int SortRole = Qt::UserRole;

  // Starts empty: connect errorOccurred, then call refresh().
  explicit RunsModel(std::shared_ptr<RunStore> store, QObject* parent = nullptr);
  ~RunsModel() override;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  const std::shared_ptr<RunStore>& store() const { return store_; }
  // Shows another store's runs: every row and visibility tick of the old one goes (run ids are per store).
  void setStore(std::shared_ptr<RunStore> store);
  qint64 runId(int row) const;  // 0 for a row out of range
  int rowOf(qint64 id) const;   // -1 when the run is not in the table
  const RunRow* row(int row) const;
  QList<qint64> visibleIds() const;  // in table order
  bool isRunVisible(qint64 id) const;
  const std::set<qint64>& hiddenIds() const { return hidden_; }
  void setRunVisible(qint64 id, bool visible);
  static bool isEditable(RunColumn column);

  // What the time-to-target column measures: accuracy (a fraction) for classifiers, perplexity for language
  // models, at `network` (empty: each run's own).
  struct TimeTarget {
    double accuracy = 0.8, perplexity = 20;
    RetimeNetwork network;
  };
  void setTimeTarget(const TimeTarget& target);

  // A run being prepared (data, model, stages), before the store has its record: a first row with this config's
  // name and settings, status "starting", no id and no visibility tick, until called again with null (then gone at
  // once; the store's record takes its place at the next refresh).
  void setStarting(const nlohmann::json& config);
  const TimeTarget& timeTarget() const { return target_; }

 public Q_SLOTS:
  void refresh();

 Q_SIGNALS:
  void errorOccurred(const QString& message);
  void visibilityChanged(qint64 id, bool visible);
  void runEdited(qint64 id);  // its name, tags or notes were saved: views that name the run follow

 private:
  void reportError(const QString& what, const std::exception& e);
  struct Reached {
    QVariant seconds;  // a double, or invalid when not reached
    QString why;
  };
  const Reached& reached(const RunRow& r) const;  // read at the first need, then kept

  std::shared_ptr<RunStore> store_;
  std::vector<RunRow> rows_;
  std::optional<RunRow> starting_;  // also rows_.front() while set
  std::set<qint64> hidden_;  // runs whose visibility box is unticked (new runs start visible)
  TimeTarget target_;
  mutable std::map<qint64, Reached> reached_;
};

}  // namespace ps::ui
