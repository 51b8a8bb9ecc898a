#pragma once
#include "engine/suites/Suite.h"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace ps::cli {

struct SuiteOptions {
  std::string store, output;
  std::vector<std::string> names;  // run / report: the suite; list: ignored
  int seeds = 0;                   // 0: as many as the suite lists
  std::vector<std::string> variants;  // run: only these variants (empty: all)
  bool quick = false, gpu = false, json = false, anyVersion = false;
  SuiteScale scale() const { return {quick, gpu}; }
};

// pipesqueeze-cli suite list | run NAME | report NAME -o DIR
void addSuiteCommand(CLI::App& app, SuiteOptions& options);
// Exit code: 0 done, 1 stopped (Ctrl-C) or a run failed, 2 bad input (raised as exceptions).
int runSuite(CLI::App& app, const SuiteOptions& options);

}  // namespace ps::cli
