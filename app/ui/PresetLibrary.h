#pragma once
// ps::ui::PresetLibrary: the presets the app offers: the bundled ones (installed, or the source tree's) and the
// user's own, saved from the current settings into the user preset folder the CLI also searches
// (userPresetDirectory()). User presets are never overwritten without the caller asking.
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>
#include <vector>

namespace ps::ui {

struct PresetEntry {
  QString name;  // shown in the picker: the file's stem
  QString path;
  bool user = false;
};

class PresetLibrary {
 public:
  // userDir: where user presets are saved (created on demand). Empty: the user preset folder shared with the CLI.
  explicit PresetLibrary(QString userDir = {});

  std::vector<PresetEntry> list() const;  // bundled first, then the user's; each group sorted by name
  QString userDir() const { return userDir_; }
  // Writes `config` as <userDir>/<name>.json. Returns an error to show, or empty. `name` becomes a safe file name.
  QString save(const QString& name, const nlohmann::json& config, bool overwrite = false) const;
  QString pathFor(const QString& name) const;  // where save() would write
  static QString defaultPresetPath();          // presets/fashion-mnist-4stage.json

 private:
  QString userDir_;
  QString earlierDir_;  // where earlier versions saved user presets, when it exists: listed, never written
};

}  // namespace ps::ui
