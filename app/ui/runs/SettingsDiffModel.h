#pragma once
// ps::ui::SettingsDiffModel: the compare view's settings table. Column 0 is the setting (a flattened dot path of
// the run config, e.g. "compression.forward.k"), then one column per run (header: the run's name in its colour).
// By default only the settings whose values differ between the runs are listed; setShowAll(true) lists every
// setting, with the differing ones in bold. run.name is left out of the differences: the headers show it.
//
// A cell shows the value as the runs table writes it (K as "5 %"), then each change made during the run ("topk →
// quantize at step 326"); a compression option that does nothing under the direction's method (a sparsifier's
// rounding at 32 value bits, K for a quantizer) reads "n/a" and differs from nothing but a value.
#include "app/ui/runs/RunSeries.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace ps::ui {

class SettingsDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  struct Run {
    qint64 id = 0;
    QString name;
    QColor color;
    nlohmann::json config;               // as the run started
    std::vector<SettingChange> changes;  // in step order
  };

  explicit SettingsDiffModel(QObject* parent = nullptr);

  void setRuns(const std::vector<Run>& runs);
  void setShowAll(bool all);
  QString key(int row) const;              // the setting of a row
  int rowOfKey(const QString& key) const;  // -1 when not listed
  bool differs(const QString& key) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // Every leaf of a JSON object as "dot.path" -> its text as the runs table writes it (settingText; arrays as JSON).
  static std::map<QString, QString> flatten(const nlohmann::json& config);
  // Whether the setting `key` does anything in `config`: false only for a compression option that the direction's
  // method, compensation and controller do not read.
  static bool applies(const nlohmann::json& config, const QString& key);

 private:
  void rebuild();

  std::vector<Run> runs_;
  std::vector<std::map<QString, QString>> values_;  // per run
  QStringList allKeys_, keys_;                      // every key; the listed keys
  QStringList differing_;                           // sorted
  bool showAll_ = false;
};

}  // namespace ps::ui
