#include "app/cli/PresetsCommand.h"

#include "engine/runs/config/PresetSearch.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace ps::cli {

void addPresetsCommand(CLI::App& app, PresetsOptions& o) {
  auto* cmd = app.add_subcommand("presets", "List the presets found by name and the folders searched, in order");
  cmd->add_flag("--suites", o.suites, "list the claim suites instead");
}

int runPresets(const PresetsOptions& o) {
  const std::string sub = o.suites ? "suites" : "";
  std::cout << (o.suites ? "Suites" : "Presets") << " are looked up by name in these folders, first match wins:\n";
  int n = 0;
  for (const PresetFolder& f : presetFolders(sub)) {
    std::error_code ec;
    std::cout << "  " << ++n << ". " << originName(f.origin) << ": " << f.path
              << (std::filesystem::is_directory(f.path, ec) ? "" : " (absent)") << "\n";
  }
  const std::vector<PresetFile> files = listPresets(sub);
  size_t width = 4;
  for (const PresetFile& f : files) width = std::max(width, f.name.size());
  std::cout << "\n";
  for (const PresetFile& f : files)
    std::cout << f.name << std::string(width + 2 - f.name.size(), ' ') << f.path
              << (f.shadowed ? "  (hidden by the same name above)" : "") << "\n";
  if (files.empty()) std::cout << "(none)\n";
  return 0;
}

}  // namespace ps::cli
