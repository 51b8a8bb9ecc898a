#include "app/ui/PresetLibrary.h"

#include "engine/runs/config/Config.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

namespace ps::ui {
namespace {

std::vector<PresetEntry> scan(const QString& dir, bool user) {
  std::vector<PresetEntry> out;
  const QDir d(dir);
  for (const QFileInfo& f : d.entryInfoList({"*.json"}, QDir::Files, QDir::Name))
    out.push_back({f.completeBaseName(), f.absoluteFilePath(), user});
  return out;
}

}  // namespace

PresetLibrary::PresetLibrary(QString userDir) : userDir_(std::move(userDir)) {
  if (!userDir_.isEmpty()) return;
  // The folder the CLI finds presets in too. Earlier versions saved into Qt's own data folder: still listed.
  userDir_ = QString::fromStdString(userPresetDirectory());
  const QString earlier = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/presets");
  if (earlier != userDir_ && QDir(earlier).exists()) earlierDir_ = earlier;
  if (userDir_.isEmpty()) userDir_ = earlier;  // no home folder known to the engine: Qt's answer
}

std::vector<PresetEntry> PresetLibrary::list() const {
  auto out = scan(QString::fromStdString(presetDirectory()), false);
  for (auto& e : scan(userDir_, true)) out.push_back(std::move(e));
  if (!earlierDir_.isEmpty())
    for (auto& e : scan(earlierDir_, true)) out.push_back(std::move(e));
  return out;
}

QString PresetLibrary::pathFor(const QString& name) const {
  QString safe = name.trimmed();
  safe.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
  return userDir_ + "/" + safe + ".json";
}

QString PresetLibrary::save(const QString& name, const nlohmann::json& config, bool overwrite) const {
  if (name.trimmed().isEmpty()) return QObject::tr("Give the preset a name.");
  try {
    Config::fromJson(config, name.toStdString());  // never save a preset that would not load
  } catch (const std::exception& e) {
    return QObject::tr("The settings are not valid, so they were not saved: %1").arg(QString::fromUtf8(e.what()));
  }
  const QString path = pathFor(name);
  if (!overwrite && QFile::exists(path)) return QObject::tr("A preset named \"%1\" exists already.").arg(name);
  if (!QDir().mkpath(userDir_)) return QObject::tr("Cannot create the folder %1: check its permissions.").arg(userDir_);
  QSaveFile file(path);  // written to a temporary file and renamed: an existing preset is never half-overwritten
  if (!file.open(QIODevice::WriteOnly)) return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
  const std::string text = config.dump(2) + "\n";
  file.write(text.data(), qint64(text.size()));
  if (!file.commit()) return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
  return {};
}

QString PresetLibrary::defaultPresetPath() {
  return QString::fromStdString(presetDirectory()) + QStringLiteral("/fashion-mnist-4stage.json");
}

}  // namespace ps::ui
