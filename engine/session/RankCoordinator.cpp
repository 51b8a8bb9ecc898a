#include "engine/session/RankCoordinator.h"

#include "engine/errors/ConfigError.h"
#include "engine/session/Threads.h"
#include "engine/telemetry/StepReport.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ps {

using nlohmann::json;

ClusterOptions RankCoordinator::decide(const Config& config) {
  ClusterOptions co = optionsSet_ ? options_ : ClusterOptions::fromEnvironment();
  const int workers = config.pipeline.stages * config.parallel.replicas;
  if (!co.active() && config.parallel.processes() && workers > 1) {
    // Start the other ranks here; this process is rank 0 (what `pipesqueeze-cli launch` and the app do).
    co = ClusterOptions{};
    co.world = co.local_world = workers;
    co.master_port = freeLoopbackPort();
    co.token = newStoreToken();
    auto launcher = std::make_unique<Launcher>(config.json, workers, co.master_port, co.token);
    std::lock_guard<std::mutex> lock(launcherMutex_);
    launcher_ = std::move(launcher);
  }
  if (!co.active()) return co;
  if (co.world != workers)  // before any data is loaded
    throw ConfigError("WORLD_SIZE = " + std::to_string(co.world) +
                      " but the run has pipeline.stages = " + std::to_string(config.pipeline.stages) +
                      " x parallel.replicas = " + std::to_string(config.parallel.replicas) + " = " +
                      std::to_string(workers) + " workers; start one process per stage and replica");
  co.timeout_s = config.parallel.timeout_s;
  return co;
}

void RankCoordinator::connect(const Config& config) {
  options_ = decide(config);
  optionsSet_ = true;
  // Every rank connects before loading data, so a launcher's port is taken at once and no rank's data loading
  // eats into another's connect timeout.
  if (options_.active())
    cluster_ = std::make_shared<Cluster>(options_, config.pipeline.stages, config.parallel.replicas);
}

bool RankCoordinator::launched() const {
  std::lock_guard<std::mutex> lock(launcherMutex_);
  return launcher_ != nullptr;
}

int RankCoordinator::threadsPerStage(const Config& config) const {
  if (!options_.active()) return configureThreads(int(config.train.threads), config.pipeline.stages);
  // One stage per process: the processes on this machine share its cores.
  const int total = config.train.threads > 0 ? int(config.train.threads) : hardwareThreads();
  const int local = options_.local_world > 0 ? options_.local_world : options_.world;
  return configureThreads(std::max(1, total / local), 1);
}

std::vector<size_t> RankCoordinator::agreeOnCuts(const std::vector<size_t>& mine, size_t blocks, int stages) {
  if (!cluster_) return mine;
  std::vector<size_t> starts;
  const auto bytes = cluster_->broadcastWorld(rank() == 0 ? json::to_cbor(json(mine)) : std::vector<uint8_t>{});
  try {
    starts = report::readCbor(bytes).get<std::vector<size_t>>();
  } catch (const std::exception& e) {
    throw ClusterError(std::string("rank 0 sent malformed stage cuts: ") + e.what());
  }
  bool valid = int(starts.size()) == stages && starts.front() == 0;
  for (size_t s = 1; valid && s < starts.size(); ++s) valid = starts[s] > starts[s - 1] && starts[s] < blocks;
  if (!valid)
    throw ClusterError("rank 0 sent stage cuts " + json(starts).dump() + " that do not cut this rank's " +
                       std::to_string(blocks) + " blocks into " + std::to_string(stages) + " stages");
  return starts;
}

bool RankCoordinator::agreeOnFlag(bool mine) {
  if (!cluster_) return mine;
  const auto choice = cluster_->broadcastWorld({uint8_t(mine ? 1 : 0)});
  return !choice.empty() && choice[0] == 1;
}

RankCoordinator::Commands RankCoordinator::shareCommands(const CommandQueue::Turn& turn) {
  Commands out;
  if (!cluster_) return {turn.sets, turn.stop, turn.paused};
  const bool root = rank() == 0;
  json control;
  if (root) {
    json sets = json::array();
    for (const auto& c : turn.sets) sets.push_back({c.key, c.value});
    control = {{"stop", turn.stop}, {"paused", turn.paused}, {"sets", sets}};
  }
  const auto bytes = cluster_->broadcastWorld(root ? json::to_cbor(control) : std::vector<uint8_t>{});
  try {
    control = report::readCbor(bytes);
    for (const auto& s : control.at("sets")) out.sets.push_back(Command::set(s.at(0), s.at(1)));
    out.stop = control.at("stop").get<bool>(), out.paused = control.at("paused").get<bool>();
  } catch (const std::exception& e) {
    throw ClusterError(std::string("rank 0 sent malformed commands: ") + e.what());
  }
  return out;
}

void RankCoordinator::injectFault(int64_t step) const {
  static const char* spec = std::getenv("PIPESQUEEZE_FAULT");
  if (!cluster_ || !spec || !*spec) return;
  int r = -1;
  long long at = -1;
  char what[8] = {0};
  if (std::sscanf(spec, "%d:%lld:%7s", &r, &at, what) != 3 || r != rank() || at != step) return;
  std::fprintf(stderr, "rank %d: PIPESQUEEZE_FAULT: %s at step %lld\n", r, what, at);
  std::raise(std::string(what) == "hang" ? SIGSTOP : SIGKILL);
}

std::string RankCoordinator::failureReason(const std::string& local, double timeout_s) {
  if (!cluster_) return local;
  cluster_->reportFault(local);
  if (cluster_->rank() != 0) return local;
  // Rank 0 names the rank that failed: the ones whose heartbeat stopped (killed, crashed or hung), else the ones
  // that reported an error of their own rather than one seen on a peer.
  const auto silent = cluster_->silentRanks(1.5);
  const auto reports = cluster_->faults(silent.empty() ? std::min(5.0, timeout_s) : 0.5);
  std::string reason;
  for (int r : silent) {
    const std::string who = cluster_->describe(r);
    bool reported = false;  // it failed on its own account and exited: not the culprit
    for (const auto& report : reports) reported = reported || report.rfind(who + ":", 0) == 0;
    if (!reported) reason += (reason.empty() ? "" : "; ") + who + " stopped responding (killed, crashed or hung)";
  }
  if (reason.empty())
    for (const auto& r : reports)
      if (r.find("closed its connection") == std::string::npos && r.find("sent nothing") == std::string::npos &&
          r.find("another rank stopped") == std::string::npos)
        reason += (reason.empty() ? "" : "; ") + r;
  std::string details = cluster_->describe(0) + ": " + local;
  for (const auto& r : reports) details += " | " + r;
  return reason.empty() ? details : reason + " [" + details + "]";
}

std::vector<std::string> RankCoordinator::awaitLaunched(double seconds) {
  Launcher* launcher = nullptr;
  {
    std::lock_guard<std::mutex> lock(launcherMutex_);
    launcher = launcher_.get();  // set once before the run, never replaced
  }
  return launcher ? launcher->finish(seconds) : std::vector<std::string>{};
}

void RankCoordinator::abortLaunched() noexcept {
  std::lock_guard<std::mutex> lock(launcherMutex_);
  if (launcher_) launcher_->killAll();
}

}  // namespace ps
