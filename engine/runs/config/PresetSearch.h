#pragma once
// Where presets and suites are found, the same for the app and the CLI. A name is looked up in these folders, first
// match wins:
//   1. $PIPESQUEEZE_PRESETS, when set (a folder standing in for the bundled presets: tests, scripted setups);
//   2. the user's presets: <userDataFolder()>/presets, where the app saves them;
//   3. the installed presets: <prefix>/share/pipesqueeze/presets;
//   4. the source tree's presets/, in development builds only.
// A path to an existing file is used as it is. Suites are the same folders' suites/ subfolders.
#include <string>
#include <vector>

namespace ps {

enum class PresetOrigin { Environment, User, Installed, Source };
const char* originName(PresetOrigin origin);  // "PIPESQUEEZE_PRESETS", "user", "installed", "source tree"

struct PresetFolder {
  std::string path;
  PresetOrigin origin;
};

struct PresetFile {
  std::string name;  // the file's stem
  std::string path;
  PresetOrigin origin;
  bool shadowed = false;  // a folder earlier in the order holds the same name
};

// The folders searched, in order (they need not exist); `sub` is "" for presets, "suites" for suites.
std::vector<PresetFolder> presetFolders(const std::string& sub = "");
// Every *.json in those folders, folder by folder, each sorted by name.
std::vector<PresetFile> listPresets(const std::string& sub = "");
// The user's preset folder (not created); "" when no home folder is known.
std::string userPresetDirectory();
// The folder holding the bundled presets: the first of 1, 3 and 4 that exists, else the last folder searched ("" when
// none is).
std::string presetDirectory();

// A preset given as a path, or as a name (with or without .json) from the folders above; ConfigError otherwise,
// naming every folder tried.
std::string resolvePreset(const std::string& preset);
// The same for any JSON file kept by name: looked up in `folders` (`what` names it in the error, `hint` says how to
// list them).
std::string resolveJsonFile(const std::string& nameOrPath, const std::vector<PresetFolder>& folders,
                            const std::string& what, const std::string& hint = "");

}  // namespace ps
