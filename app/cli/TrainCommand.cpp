#include "app/cli/TrainCommand.h"
#include "engine/core/RunSummary.h"
#include "engine/runs/config/RunLabels.h"

#include "app/cli/ProgressPrinter.h"
#include "app/cli/StopOnSignal.h"
#include "engine/dist/Launcher.h"
#include "engine/session/Session.h"

#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace ps::cli {
namespace {

std::atomic<Session*> activeSession{nullptr};
void stopActiveSession() {
  if (Session* s = activeSession.load()) s->requestStop();
}

CLI::App* commonOptions(CLI::App* cmd, TrainOptions& o) {
  cmd->add_option("--preset", o.preset, "preset file or name from presets/")->required();
  cmd->add_option("--set", o.sets, "override a setting: key=value (repeatable)");
  cmd->add_option("--store", o.store, "run store file (default: $XDG_DATA_HOME/pipesqueeze/runs.sqlite)");
  cmd->add_option("--name", o.name, "run name");
  cmd->add_flag("--json", o.json, "print the summary as one JSON object on the last line of stdout");
  cmd->add_option("--bind", o.bind,
                  "multi-process: the local address or interface this rank listens on (or $PIPESQUEEZE_BIND, "
                  "$GLOO_SOCKET_IFNAME; default: loopback for a master on loopback, else the address that routes to "
                  "the master)");
  return cmd;
}

ClusterOptions clusterOptions(const TrainOptions& o) {
  Launcher::followLauncher();  // a rank the launcher started ends with it
  ClusterOptions c = ClusterOptions::fromEnvironment();
  if (o.world >= 0) c.world = o.world;
  if (o.rank >= 0) c.rank = o.rank;
  if (o.masterPort >= 0) c.master_port = o.masterPort;
  if (!o.masterAddr.empty()) c.master_addr = o.masterAddr;
  if (!o.bind.empty()) c.bind = o.bind, c.bind_source = "--bind";
  if (c.world < 1 || c.rank < 0 || c.rank >= c.world)
    throw ConfigError("--rank " + std::to_string(c.rank) + " is not in 0 .. --world-size - 1 = " +
                      std::to_string(c.world - 1));
  return c;
}

}  // namespace

void addTrainCommand(CLI::App& app, TrainOptions& o) {
  auto* cmd = commonOptions(app.add_subcommand("train", "Train a preset and record the run"), o);
  cmd->add_option("--rank", o.rank, "multi-process: this process's rank (or $RANK)");
  cmd->add_option("--world-size", o.world, "multi-process: number of processes (or $WORLD_SIZE)");
  cmd->add_option("--master-addr", o.masterAddr, "multi-process: rank 0's address (or $MASTER_ADDR, default 127.0.0.1)");
  cmd->add_option("--master-port", o.masterPort, "multi-process: rank 0's rendezvous port (or $MASTER_PORT, default 29500)");
}

void addLaunchCommand(CLI::App& app, TrainOptions& o) {
  auto* cmd = commonOptions(
      app.add_subcommand("launch", "Train a preset as a multi-process run on this machine: one process per stage and "
                                   "replica, this one is rank 0 and records the run"),
      o);
  cmd->add_option("--nproc", o.nproc, "processes to start (must equal pipeline.stages x parallel.replicas)");
  cmd->callback([&o] { o.launch = true; });
}

namespace {

Config configOf(const TrainOptions& o) {
  auto json = readJsonFile(resolvePreset(o.preset));
  const Config preset = Config::fromJson(json, o.preset);
  std::vector<std::string> given;  // keys the command line sets: those may name any path
  for (const auto& s : o.sets) given.push_back(s.substr(0, s.find('=')));
  checkPresetPaths(json, o.preset, given);
  for (const auto& s : o.sets) applyOverride(json, s);
  if (!o.name.empty()) json["run"]["name"] = o.name;
  if (o.launch) json["parallel"]["mode"] = "processes";
  Config config = Config::fromJson(json, o.preset);
  // A --set that changes training leaves the preset's name and tags behind (a TopK run is not the "baseline").
  nlohmann::json relabelled = config.json;
  if (relabelModified(preset.json, relabelled)) config = Config::fromJson(relabelled, o.preset);
  return config;
}

// `launch` starts one process per stage and replica itself, so it must be the only launcher and the count must fit.
void checkLaunch(const TrainOptions& o, const Config& config, const ClusterOptions& cluster) {
  const int workers = config.pipeline.stages * config.parallel.replicas;
  if (cluster.active())
    throw ConfigError("launch starts its own ranks, but " + cluster.ranks_from +
                      " are set; use `train` under an external launcher (torchrun, srun), or unset them");
  if (o.nproc > 0 && o.nproc != workers)
    throw ConfigError("--nproc " + std::to_string(o.nproc) + " but the run has pipeline.stages = " +
                      std::to_string(config.pipeline.stages) + " x parallel.replicas = " +
                      std::to_string(config.parallel.replicas) + " = " + std::to_string(workers) +
                      " workers; use --nproc " + std::to_string(workers) + " or change the stages or replicas");
  if (workers < 2)
    throw ConfigError("launch needs at least 2 processes, but the run has 1 stage and 1 replica; raise "
                      "pipeline.stages or parallel.replicas, or use `train`");
}

// Runs the session until it ends or Ctrl-C stops it; a worker rank has no store and prints no progress.
nlohmann::json trainSession(const TrainOptions& o, Session& session, bool showProgress) {
  const bool terminal = isatty(fileno(stderr));
  if (showProgress && (!o.json || terminal))
    session.telemetry().addSink(std::make_shared<ProgressPrinter>(stderr, terminal));
  activeSession = &session;
  nlohmann::json summary;
  {
    StopOnSignal interrupt(stopActiveSession);
    summary = session.run();
  }
  activeSession = nullptr;
  return summary;
}

}  // namespace

int runTrain(const TrainOptions& o) {
  const Config config = configOf(o);
  const ClusterOptions cluster = clusterOptions(o);
  if (o.launch) checkLaunch(o, config, cluster);
  const bool worker = cluster.active() && cluster.rank != 0;  // only rank 0 records and reports the run

  std::shared_ptr<RunStore> store;
  if (!worker) {
    store = std::make_shared<RunStore>(o.store.empty() ? RunStore::defaultPath() : o.store);
    store->reapOrphans();
  }
  // The session lives to the end of this function: a failed multi-process rank leaves through _Exit below without
  // tearing it down, because peers may be gone and its connections would wait on them.
  Session session(config, store);
  session.setCluster(cluster);
  const nlohmann::json summary = trainSession(o, session, !worker);

  const std::string status = summary[summary_key::kStatus];
  if (worker) {  // rank 0 reports stops and divergence; a worker's own exit code says only whether it failed
    if (status != run_status::kFailed) return 0;
    std::cerr << "rank " << cluster.rank << ": run " << status << ": "
              << summary.value(summary_key::kReason, std::string()) << "\n";
    std::fflush(nullptr);
    std::_Exit(1);  // peers may be gone: do not wait on their connections while tearing down
  }
  if (o.json) {
    std::cout << summary.dump() << std::endl;
  } else {
    std::cout << "run " << summary[summary_key::kRunId] << " " << status << " after " << summary[summary_key::kSteps]
              << " steps in " << store->path() << "\n";
  }
  if (status != run_status::kFinished) {
    const std::string reason = summary.value(summary_key::kReason, std::string());
    std::cerr << "run " << status << ": " << reason << "\n";
    if (status == run_status::kStopped && reason.rfind(Session::kReachedTarget, 0) == 0) return 0;  // as asked
    if (status == run_status::kFailed && (cluster.active() || o.launch || config.parallel.processes())) {
      std::fflush(nullptr);
      std::_Exit(1);  // the run is recorded; peers may be gone, so do not wait on their connections
    }
    return 1;
  }
  return 0;
}

}  // namespace ps::cli
