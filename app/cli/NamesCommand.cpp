#include "app/cli/NamesCommand.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/runs/config/ConfigSchema.h"
#include "engine/runs/config/PresetSearch.h"

#include <iostream>

namespace ps::cli {
namespace {

// Each name once, in the order found: a preset hidden by one of the same name earlier in the search is the same name.
std::vector<std::string> presetNames(const std::string& sub) {
  std::vector<std::string> out;
  for (const PresetFile& f : listPresets(sub))
    if (!f.shadowed) out.push_back(f.name);
  return out;
}

// Configuration keys as `--set` takes them; a pattern's `*` (a boundary index) stays for the user to fill in.
std::vector<std::string> keyNames() {
  std::vector<std::string> out;
  for (const KeySpec& k : ConfigSchema::instance().keys()) out.push_back(k.path);
  return out;
}

// The catalogue lists each option once, however many methods read it.
std::vector<std::string> optionNames() {
  std::vector<std::string> out;
  for (const OptionSpec& o : catalogue::options()) out.push_back(o.name);
  return out;
}

}  // namespace

void addNamesCommand(CLI::App& app, NamesOptions& o) {
  auto* cmd = app.add_subcommand("names", "Print the names a command line takes, one per line (for scripts and "
                                          "shell completion)");
  cmd->add_option("what", o.what, "what to name")
      ->required()
      ->check(CLI::IsMember({"presets", "suites", "keys", "codecs", "compensations", "options"}));
}

int runNames(const NamesOptions& o) {
  std::vector<std::string> names;
  if (o.what == "presets") names = presetNames("");
  else if (o.what == "suites") names = presetNames("suites");
  else if (o.what == "keys") names = keyNames();
  else if (o.what == "codecs") names = catalogue::names(catalogue::codecs());
  else if (o.what == "compensations") names = catalogue::names(catalogue::compensations());
  else names = optionNames();
  for (const auto& n : names) std::cout << n << "\n";
  return 0;
}

}  // namespace ps::cli
