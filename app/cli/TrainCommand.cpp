#include "app/cli/TrainCommand.h"

#include "app/cli/ProgressPrinter.h"
#include "engine/session/Session.h"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace ps::cli {
namespace {

Session* activeSession = nullptr;
extern "C" void onInterrupt(int) {
  if (activeSession) activeSession->requestStop();
}

std::string resolvePreset(const std::string& preset) {
  if (std::filesystem::exists(preset)) return preset;
  for (const std::string candidate : {presetDirectory() + "/" + preset, presetDirectory() + "/" + preset + ".json"})
    if (std::filesystem::exists(candidate)) return candidate;
  throw ConfigError("no preset '" + preset + "': give a path to a JSON file or a name from " + presetDirectory());
}

}  // namespace

void addTrainCommand(CLI::App& app, TrainOptions& o) {
  auto* cmd = app.add_subcommand("train", "Train a preset and record the run");
  cmd->add_option("--preset", o.preset, "preset file or name from presets/")->required();
  cmd->add_option("--set", o.sets, "override a setting: key=value (repeatable)");
  cmd->add_option("--store", o.store, "run store file (default: $XDG_DATA_HOME/pipesqueeze/runs.sqlite)");
  cmd->add_option("--name", o.name, "run name");
  cmd->add_flag("--json", o.json, "print the summary as one JSON object on the last line of stdout");
}

int runTrain(const TrainOptions& o) {
  auto json = readJsonFile(resolvePreset(o.preset));
  for (const auto& s : o.sets) applyOverride(json, s);
  if (!o.name.empty()) json["run"]["name"] = o.name;
  Config config = Config::fromJson(json, o.preset);

  auto store = std::make_shared<RunStore>(o.store.empty() ? RunStore::defaultPath() : o.store);
  store->reapOrphans();
  Session session(config, store);
  const bool terminal = isatty(fileno(stderr));
  if (!o.json || terminal) session.telemetry().addSink(std::make_shared<ProgressPrinter>(stderr, terminal));

  activeSession = &session;
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  auto summary = session.run();
  activeSession = nullptr;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);

  const std::string status = summary["status"];
  if (o.json) {
    std::cout << summary.dump() << std::endl;
  } else {
    std::cout << "run " << summary["run_id"] << " " << status << " after " << summary["steps"] << " steps in "
              << store->path() << "\n";
  }
  if (status != "finished") {
    std::cerr << "run " << status << ": " << summary.value("reason", std::string()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace ps::cli
