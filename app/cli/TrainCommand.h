#pragma once
#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace ps::cli {

struct TrainOptions {
  std::string preset, store, name;
  std::vector<std::string> sets;
  bool json = false;
  // Multi-process: where this process is among the ranks (flags override RANK, WORLD_SIZE, MASTER_ADDR,
  // MASTER_PORT and PIPESQUEEZE_BIND); -1 / empty: from the environment.
  int rank = -1, world = -1, masterPort = -1;
  std::string masterAddr, bind;
  // launch: start this many local processes (0: pipeline.stages x parallel.replicas).
  bool launch = false;
  int nproc = 0;
};

void addTrainCommand(CLI::App& app, TrainOptions& options);
void addLaunchCommand(CLI::App& app, TrainOptions& options);
// Exit code: 0 finished, 1 stopped / diverged / failed, 2 bad input (raised as exceptions).
int runTrain(const TrainOptions& options);

}  // namespace ps::cli
