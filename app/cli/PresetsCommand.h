#pragma once
// `pipesqueeze-cli presets [--suites]`: the presets (or suites) a name finds, folder by folder in search order, with
// the folders searched and those a name earlier in the order hides.
#include <CLI/CLI.hpp>

namespace ps::cli {

struct PresetsOptions {
  bool suites = false;
};

void addPresetsCommand(CLI::App& app, PresetsOptions& o);
int runPresets(const PresetsOptions& o);

}  // namespace ps::cli
