#include "engine/runs/config/PresetSearch.h"

#include "engine/core/UserFolders.h"
#include "engine/errors/ConfigError.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace ps {

namespace fs = std::filesystem;

namespace {

std::string join(const std::string& folder, const std::string& sub) {
  return sub.empty() ? folder : folder + "/" + sub;
}

bool isFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

#ifdef PIPESQUEEZE_INSTALLED_PRESETS
// The installed presets: beside the running program (<prefix>/bin/../share/pipesqueeze/presets), so a package
// unpacked anywhere finds its own; otherwise where the build was told it would be installed.
std::string installedPresets() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / PIPESQUEEZE_INSTALL_DATADIR / "pipesqueeze" / "presets";
    if (fs::is_directory(beside, ec)) return beside.lexically_normal().string();
  }
  return PIPESQUEEZE_INSTALLED_PRESETS;
}
#endif

}  // namespace

const char* originName(PresetOrigin origin) {
  switch (origin) {
    case PresetOrigin::Environment:
      return "PIPESQUEEZE_PRESETS";
    case PresetOrigin::User:
      return "user";
    case PresetOrigin::Installed:
      return "installed";
    case PresetOrigin::Source:
      return "source tree";
  }
  return "?";
}

std::string userPresetDirectory() {
  const std::string folder = userDataFolder();
  return folder.empty() ? "" : folder + "/presets";
}

std::vector<PresetFolder> presetFolders(const std::string& sub) {
  std::vector<PresetFolder> out;
  if (const char* env = std::getenv("PIPESQUEEZE_PRESETS"); env && *env)
    out.push_back({join(env, sub), PresetOrigin::Environment});
  if (const std::string user = userPresetDirectory(); !user.empty())
    out.push_back({join(user, sub), PresetOrigin::User});
#ifdef PIPESQUEEZE_INSTALLED_PRESETS  // set by the build (CMake's install prefix); absent in the fuzz targets
  out.push_back({join(installedPresets(), sub), PresetOrigin::Installed});
#endif
#ifdef PIPESQUEEZE_SOURCE_PRESETS
  out.push_back({join(PIPESQUEEZE_SOURCE_PRESETS, sub), PresetOrigin::Source});
#endif
  return out;
}

std::vector<PresetFile> listPresets(const std::string& sub) {
  std::vector<PresetFile> out;
  for (const PresetFolder& folder : presetFolders(sub)) {
    std::vector<PresetFile> here;
    std::error_code ec;
    for (fs::directory_iterator it(folder.path, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json" && isFile(it->path().string()))
        here.push_back({it->path().stem().string(), it->path().string(), folder.origin});
    std::sort(here.begin(), here.end(), [](const PresetFile& a, const PresetFile& b) { return a.name < b.name; });
    for (PresetFile& f : here) {
      f.shadowed = std::any_of(out.begin(), out.end(), [&](const PresetFile& o) { return o.name == f.name; });
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::string presetDirectory() {
  const std::vector<PresetFolder> folders = presetFolders();
  for (const PresetFolder& f : folders) {
    std::error_code ec;
    if (f.origin != PresetOrigin::User && fs::is_directory(f.path, ec)) return f.path;
  }
  return folders.empty() ? "" : folders.back().path;
}

std::string resolveJsonFile(const std::string& nameOrPath, const std::vector<PresetFolder>& folders,
                            const std::string& what, const std::string& hint) {
  if (isFile(nameOrPath)) return nameOrPath;
  std::string tried;
  for (const PresetFolder& f : folders) {
    for (const std::string candidate : {f.path + "/" + nameOrPath, f.path + "/" + nameOrPath + ".json"})
      if (isFile(candidate)) return candidate;
    tried += (tried.empty() ? "" : ", ") + f.path;
  }
  throw ConfigError("no " + what + " '" + nameOrPath + "': give a path to a JSON file or a name from " + tried +
                    (hint.empty() ? "" : " (" + hint + ")"));
}

std::string resolvePreset(const std::string& preset) {
  return resolveJsonFile(preset, presetFolders(), "preset", "pipesqueeze-cli presets lists them");
}

}  // namespace ps
