#pragma once
#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace ps::cli {

struct TrainOptions {
  std::string preset, store, name;
  std::vector<std::string> sets;
  bool json = false;
};

void addTrainCommand(CLI::App& app, TrainOptions& options);
// Exit code: 0 finished, 1 stopped / diverged / failed, 2 bad input (raised as exceptions).
int runTrain(const TrainOptions& options);

}  // namespace ps::cli
