#pragma once
// `pipesqueeze-cli names WHAT`: the names a command line takes, one per line, for scripts and shell completion
// (presets, suites, configuration keys, codecs, compensations, codec options). Read from the same places the
// commands themselves look them up, so a completion never offers a name the lab would refuse.
#include <CLI/CLI.hpp>

#include <string>

namespace ps::cli {

struct NamesOptions {
  std::string what;
};

void addNamesCommand(CLI::App& app, NamesOptions& o);
int runNames(const NamesOptions& o);

}  // namespace ps::cli
