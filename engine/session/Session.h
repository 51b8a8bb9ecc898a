#pragma once
// A training run: config → data → model → stages → pipeline, driven step by step, with telemetry out
// and commands in. The GUI and the CLI both drive this class.
#include "engine/compress/Adaptive.h"
#include "engine/pipeline/Pipeline.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/Command.h"
#include "engine/session/CommandQueue.h"
#include "engine/session/RankCoordinator.h"
#include "engine/session/TaskData.h"
#include "engine/telemetry/TelemetryBus.h"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ps {

class Session {
 public:
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
  // Where the run is: the step loop's state, the figures the summary reports.
  struct Progress {
    int64_t step = 0, epoch = 0;
    double emulated = 0;
    uint64_t raw = 0, wire = 0;
    std::deque<double> recentLoss;  // last 50
    std::optional<EvalRecord> evalCompressed, evalPlain;
    std::string status = "running", reason;
  };
  // The steps of run() (SessionRun.cpp): record the run and announce it, train one step, publish what it measured,
  // evaluate when due, finish (final evaluation, checkpoint), wait for the other ranks, summarise.
  void openRun();
  nlohmann::json stagesDescription() const;
  bool trainStep(Progress& p, const std::vector<int64_t>& order, int64_t batch);  // false: the loss diverged
  void publishStep(StepRecord rec, std::vector<HistogramRecord> histograms, Progress& p);
  void finishTraining(Progress& p);
  void saveCheckpointIfAsked(const Progress& p);
  void awaitRanks(Progress& p);
  nlohmann::json summarize(const Progress& p);
  void prepare();
  std::vector<size_t> stageStarts(BlockModel& model);
  void placeStages(PipelineOptions& o);
  struct RankPlace {
    std::string where;  // "host/0000:3B:00.0"
    bool nccl = false;  // on a GPU, and NCCL is there
  };
  std::vector<RankPlace> rankPlaces(const PipelineOptions& o) const;
  bool handleCommands(int64_t step);  // false: stop
  double commandSeconds_ = 0;  // the last handleCommands' wall time agreeing with the other ranks (not pausing)
  void announce(const CommandQueue::Turn& turn, int64_t step, double wall);
  void applySetting(const Command& c, int64_t step, double wall);
  // Gives boundary `boundary`'s direction `d` the configured options; a change that drops its compensation state is
  // a `reset` event of the run (the replicas' exchange reports its own with its traffic).
  void retargetLink(int boundary, Direction d, int64_t step, double wall);
  void replaceConfig(Config next);  // the one writer of config_ after the start (post() reads it concurrently)
  void checkAqsgdMemory(BlockModel& model, const std::vector<size_t>& starts);
  void evaluate(Progress& p);
  double learningRate(int64_t step) const;
  // Adaptive compression (SessionAdapt.cpp): one controller per link direction whose options ask for one.
  void setupAdapters(int64_t step, double wall);
  void adapt(const StepRecord& rec);
  // A decision of the direction's controller: a selection among the sender's payloads for a controller with
  // compressors of its own (GraVAC), otherwise a new K for the direction (its compressor is rebuilt: Accordion).
  void applyDecision(int boundary, Direction d, const AdaptDecision& decision, int64_t step, double wall);
  void applyAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                      int64_t step, double wall);
  void applySelection(int boundary, Direction d, const AdaptDecision& decision, const std::string& source,
                      int64_t step, double wall);
  // The config key of the factor sent and its event ("setting" when it changed, "adapt" otherwise); true if changed.
  bool recordAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                       nlohmann::json detail, int64_t step, double wall);
  double elapsed() const;

  Config config_;
  std::shared_ptr<RunStore> store_;
  TelemetryBus bus_;
  TaskData data_;
  std::unique_ptr<Pipeline> pipeline_;
  int64_t runId_ = 0;
  int64_t totalSteps_ = 0, stepsPerEpoch_ = 0;
  int threadsPerStage_ = 1;
  nlohmann::json aqsgdNote_;  // AQ-SGD memory, shown before the run
  struct Adapter {
    int boundary;
    Direction direction;
    std::unique_ptr<AdaptiveController> controller;
  };
  std::vector<Adapter> adapters_;  // boundary -1 with direction Gradients: the replicas' weight gradients

  RankCoordinator ranks_;  // the other processes of a multi-process run (inactive in a single process)

  std::mutex configMutex_;  // config_ is replaced on the training thread and read by post()
  std::deque<Command> queuedSets_;  // posted settings the training thread has not applied yet (under configMutex_)
  CommandQueue commands_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ps
