#pragma once
#include <CLI/App.hpp>

#include <cstdint>
#include <string>

namespace ps::cli {

struct RunsOptions {
  std::string store, action, output;
  int64_t id = 0;
  bool csv = false, json = false;
};

void addRunsCommand(CLI::App& app, RunsOptions& options);
int runRuns(const RunsOptions& options);

}  // namespace ps::cli
