#pragma once
// A training run: config → data → model → stages → pipeline, driven step by step, with telemetry out
// and commands in. The GUI and the CLI both drive this class.
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/AdaptiveControl.h"
#include "engine/session/Command.h"
#include "engine/session/CommandQueue.h"
#include "engine/session/RankCoordinator.h"
#include "engine/session/RunBuilder.h"
#include "engine/session/RunProgress.h"
#include "engine/telemetry/TelemetryBus.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ps {

class Session {
 public:
  // How the reason of a run that eval.stop_at_accuracy ended begins: it was stopped, and it did what was asked.
  static constexpr const char* kReachedTarget = "reached eval.stop_at_accuracy";

  // `store` may be null (no persistence, as in unit tests).
  Session(Config config, std::shared_ptr<RunStore> store);
  ~Session();

  TelemetryBus& telemetry() { return bus_; }
  // Validates and queues a command (throws ConfigError for a key that cannot change mid-run or a bad value).
  void post(Command command);
  // Async-signal-safe stop request (Ctrl-C).
  void requestStop() { commands_.requestStop(); }
  // Also stops (at the next step) once *flag is true; the flag must outlive run(). For owners of several sessions.
  void stopWhen(const std::atomic<bool>* flag) { commands_.stopWhen(flag); }
  // From any thread, when a stop did not end the run soon enough (its ranks hang): kills the ranks this session
  // launched, so the run fails now instead of after parallel.timeout_s. Nothing happens for in-process runs.
  void abortLaunchedRanks() noexcept { ranks_.abortLaunched(); }

  // Multi-process runs: where this process is among the ranks. Without it the torchrun-style environment
  // (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) decides; with neither, a run whose config asks for processes
  // (parallel.replicas > 1 or parallel.mode = processes) starts the other ranks itself and is rank 0.
  void setCluster(const ClusterOptions& options) { ranks_.setOptions(options); }
  // Rank of this process in a multi-process run (0 otherwise); only rank 0 records the run.
  int rank() const { return ranks_.rank(); }

  // Runs to the end on the calling thread and returns the summary; never throws for training failures
  // (they end the run as failed with the reason), only for bad configurations before the run starts.
  nlohmann::json run();
  int64_t runId() const { return runId_; }
  const Config& config() const { return config_; }

 private:
  // The steps of run(): record the run and announce it, take the commands, train one step and publish what it
  // measured, evaluate when due, finish (final evaluation, checkpoint), wait for the other ranks, summarise.
  void openRun();
  bool handleCommands(int64_t step);  // false: stop
  void announce(const CommandQueue::Turn& turn, int64_t step, double wall);
  void applySetting(const Command& c, int64_t step, double wall);
  bool trainStep(RunProgress& p, const std::vector<int64_t>& order, int64_t batch);  // false: the run ended
  void publishStep(StepRecord rec, std::vector<HistogramRecord> histograms, RunProgress& p);
  void evaluate(RunProgress& p);
  // The headline evaluation (compressed unless compression.inference is off) made at this step, if one was.
  const EvalRecord* headlineAt(const RunProgress& p) const;
  bool reachedTarget(RunProgress& p) const;  // eval.stop_at_accuracy: true (and the reason set) to end the run here
  void finishTraining(RunProgress& p);
  void saveCheckpointIfAsked(const RunProgress& p);
  void awaitRanks(RunProgress& p);
  nlohmann::json summarize(RunProgress& p);
  // From the telemetry thread: the store refused a write, so the run fails at its next step.
  void storeFailed(const std::string& why);
  std::string storeFailure() const;  // empty while the store takes every write

  // Gives boundary `boundary`'s direction `d` the configured options; a change that drops its compensation state is
  // a `reset` event of the run (the replicas' exchange reports its own with its traffic).
  void retargetLink(int boundary, Direction d, int64_t step, double wall);
  // The one writer of config_ after the start (post() reads it concurrently): `key` set to `value`, from `source`;
  // `queued`: the value is the oldest posted setting, which leaves the queue in the same step.
  void setValue(const std::string& key, const nlohmann::json& value, const std::string& source, bool queued = false);
  double learningRate(int64_t step) const;
  double elapsed() const;

  Config config_;
  std::shared_ptr<RunStore> store_;
  TelemetryBus bus_;
  int64_t runId_ = 0;
  BuiltRun built_;                             // data and pipeline, built when the run starts
  std::unique_ptr<AdaptiveControl> adaptive_;  // over the built pipeline
  double commandSeconds_ = 0;  // the last handleCommands' wall time agreeing with the other ranks (not pausing)

  RankCoordinator ranks_;  // the other processes of a multi-process run (inactive in a single process)

  std::mutex configMutex_;  // config_ is replaced on the training thread and read by post()
  std::deque<Command> queuedSets_;  // posted settings the training thread has not applied yet (under configMutex_)
  // Per boundary, the features its learned bottleneck codes (0: none), once the run is built (under configMutex_):
  // what a posted code_width is checked against.
  std::vector<int64_t> codeFeatures_;
  CommandQueue commands_;
  mutable std::mutex storeMutex_;
  std::string storeFailure_;  // under storeMutex_
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ps
