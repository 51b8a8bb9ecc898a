#include "app/ui/runs/SettingsDiffModel.h"
#include "app/ui/runs/RunSeries.h"
#include "engine/compress/spec/Catalogue.h"

#include <QFont>

#include <algorithm>
#include <set>

namespace ps::ui {

namespace {

void flattenInto(const nlohmann::json& node, const QString& prefix, std::map<QString, QString>& out) {
  if (node.is_object() && !node.empty()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      flattenInto(it.value(),
                  prefix.isEmpty() ? QString::fromStdString(it.key())
                                   : prefix + QLatin1Char('.') + QString::fromStdString(it.key()),
                  out);
    return;
  }
  if (prefix.isEmpty()) return;
  out[prefix] = settingText(prefix, node);
}

}  // namespace

SettingsDiffModel::SettingsDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

std::map<QString, QString> SettingsDiffModel::flatten(const nlohmann::json& config) {
  std::map<QString, QString> out;
  flattenInto(config, QString(), out);
  return out;
}

bool SettingsDiffModel::applies(const nlohmann::json& config, const QString& key) {
  const QStringList parts = key.split(QLatin1Char('.'));
  if (parts.size() < 3 || parts.front() != QLatin1String("compression")) return true;
  const std::string option = parts.back().toStdString();
  if (option == "method" || option == "feedback" || option == "adapt" || !catalogue::option(option)) return true;
  const nlohmann::json* direction = &config;
  for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
    const std::string part = parts[i].toStdString();
    if (!direction->is_object() || !direction->contains(part)) return true;
    direction = &(*direction)[part];
  }
  if (!direction->is_object()) return true;
  const auto text = [&](const char* field) {
    const auto it = direction->find(field);
    return it != direction->end() && it->is_string() ? it->get<std::string>() : std::string("none");
  };
  const auto bits = direction->find("value_bits");
  const int valueBits = bits != direction->end() && bits->is_number_integer() ? bits->get<int>() : 32;
  return catalogue::optionApplies(option, text("method"), text("feedback"), text("adapt"), valueBits);
}

namespace {

// `config` with `changes` applied: the settings as the run ended.
nlohmann::json configAtEnd(nlohmann::json config, const std::vector<SettingChange>& changes) {
  for (const auto& c : changes) {
    try {
      std::string pointer = "/" + c.key;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      config[nlohmann::json::json_pointer(pointer)] = c.to;
    } catch (const nlohmann::json::exception&) {
      // A key that does not fit the config's shape: the change still shows in its cell.
    }
  }
  return config;
}

}  // namespace

void SettingsDiffModel::setRuns(const std::vector<Run>& runs) {
  beginResetModel();
  runs_ = runs;
  values_.clear();
  std::set<QString> keys;
  for (const auto& r : runs_) {
    auto values = flatten(r.config);
    for (const auto& c : r.changes) {
      const QString key = QString::fromStdString(c.key);
      QString& cell = values[key];
      cell +=
          (cell.isEmpty() ? QString() : QStringLiteral(" → ")) + settingText(key, c.to) + tr(" at step %1").arg(c.step);
    }
    // An option the direction's method does not read, at the start or at the end, is not a setting of this run.
    const nlohmann::json end = configAtEnd(r.config, r.changes);
    for (auto& [key, text] : values)
      if (!applies(r.config, key) && !applies(end, key)) text = tr("n/a");
    for (const auto& kv : values) keys.insert(kv.first);
    values_.push_back(std::move(values));
  }
  allKeys_ = QStringList(keys.begin(), keys.end());
  differing_.clear();
  for (const QString& k : allKeys_) {
    if (k == QLatin1String("run.name")) continue;
    // A key one run lacks differs from any value the others have; "n/a" everywhere differs from nothing.
    std::set<QString> seen;
    for (const auto& v : values_) {
      auto it = v.find(k);
      seen.insert(it == v.end() ? QStringLiteral("\x01missing") : it->second);
    }
    if (seen.size() > 1) differing_.push_back(k);
  }
  rebuild();
  endResetModel();
}

void SettingsDiffModel::setShowAll(bool all) {
  if (all == showAll_) return;
  beginResetModel();
  showAll_ = all;
  rebuild();
  endResetModel();
}

void SettingsDiffModel::rebuild() {
  keys_ = showAll_ ? allKeys_ : differing_;
}

QString SettingsDiffModel::key(int row) const {
  return row >= 0 && row < keys_.size() ? keys_[row] : QString();
}

int SettingsDiffModel::rowOfKey(const QString& key) const {
  return int(keys_.indexOf(key));
}

bool SettingsDiffModel::differs(const QString& key) const {
  return std::binary_search(differing_.begin(), differing_.end(), key);
}

int SettingsDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(keys_.size());
}

int SettingsDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + int(runs_.size());
}

QVariant SettingsDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= keys_.size() || index.column() > int(runs_.size())) return QVariant();
  const QString& k = keys_[index.row()];
  if (role == Qt::FontRole && showAll_ && differs(k)) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return QVariant();
  if (index.column() == 0) return k;
  const auto& v = values_[size_t(index.column() - 1)];
  auto it = v.find(k);
  return it == v.end() ? QString() : it->second;
}

QVariant SettingsDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section > int(runs_.size())) return QVariant();
  if (section == 0) return role == Qt::DisplayRole ? QVariant(tr("Setting")) : QVariant();
  const Run& r = runs_[size_t(section - 1)];
  switch (role) {
    case Qt::DisplayRole:
      return r.name.isEmpty() ? tr("run %1").arg(r.id) : r.name;
    case Qt::ForegroundRole:
      return r.color;
    case Qt::ToolTipRole:
      return tr("Run %1").arg(r.id);
    default:
      return QVariant();
  }
}

}  // namespace ps::ui
