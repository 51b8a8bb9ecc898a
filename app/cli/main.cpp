// pipesqueeze-cli: the headless face of the engine.
#include "app/cli/CodecCommand.h"
#include "app/cli/NamesCommand.h"
#include "app/cli/PlanCommand.h"
#include "app/cli/PresetsCommand.h"
#include "app/cli/RunsCommand.h"
#include "app/cli/SuiteCommand.h"
#include "app/cli/TrainCommand.h"
#include "engine/core/CodeVersion.h"
#include "engine/dist/Cluster.h"
#include "engine/runs/config/ConfigSchema.h"

#include <torch/version.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"PipeSqueeze: communication compression for pipeline-parallel training"};
  app.set_version_flag("--version",
                       std::string("pipesqueeze-cli ") + ps::codeVersion() + " (LibTorch " TORCH_VERSION ")",
                       "Print the version of this build and of the LibTorch it runs on, then exit");
  app.require_subcommand(1);
  ps::cli::TrainOptions train;
  ps::cli::addTrainCommand(app, train);
  ps::cli::addLaunchCommand(app, train);
  ps::cli::RunsOptions runs;
  ps::cli::addRunsCommand(app, runs);
  ps::cli::SuiteOptions suites;
  ps::cli::addSuiteCommand(app, suites);
  ps::cli::CodecOptions codec;
  ps::cli::addCodecCommand(app, codec);
  ps::cli::PresetsOptions presets;
  ps::cli::addPresetsCommand(app, presets);
  ps::cli::NamesOptions names;
  ps::cli::addNamesCommand(app, names);
  ps::cli::PlanOptions plan;
  ps::cli::addPlanCommand(app, plan);
  app.add_subcommand("keys", "Print every configuration key as a Markdown table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (app.got_subcommand("train") || app.got_subcommand("launch")) return ps::cli::runTrain(train);
    if (app.got_subcommand("suite")) return ps::cli::runSuite(app, suites);
    if (app.got_subcommand("codec")) return ps::cli::runCodec(codec);
    if (app.got_subcommand("presets")) return ps::cli::runPresets(presets);
    if (app.got_subcommand("names")) return ps::cli::runNames(names);
    if (app.got_subcommand("plan")) return ps::cli::runPlan(plan);
    if (app.got_subcommand("keys")) {
      std::cout << ps::ConfigSchema::instance().markdown();
      return 0;
    }
    return ps::cli::runRuns(runs);
  } catch (const std::exception& e) {
    // One write per line: the ranks of a multi-process run share the terminal, and a line written in pieces
    // interleaves with theirs. A rank other than 0 says which it is (rank 0 speaks for the run).
    std::string line = std::string("error: ") + e.what() + "\n";
    if (const char* rank = std::getenv("RANK"); rank && *rank && std::string(rank) != "0")
      line = "rank " + std::string(rank) + ": " + line;
    std::cerr << line << std::flush;
    // Ranks that could not reach each other are a failed run (exit 1), not bad input (exit 2): the settings were
    // fine, a peer was not there or the network let them down.
    return dynamic_cast<const ps::ClusterError*>(&e) ? 1 : 2;
  }
}
