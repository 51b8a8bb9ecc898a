#pragma once
// What a run is built from before its first step: the task's data, the model cut into stages, each stage placed on
// its device, the transports the ranks agree on, and the checks that refuse a run which could not finish (AQ-SGD's
// buffers beyond their memory limit, samples that do not split over the replicas).
#include "engine/pipeline/Pipeline.h"
#include "engine/runs/config/Config.h"
#include "engine/session/RankCoordinator.h"
#include "engine/session/TaskData.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace ps {

struct BuiltRun {
  TaskData data;
  std::unique_ptr<Pipeline> pipeline;
  int64_t totalSteps = 0, stepsPerEpoch = 1;
  int threadsPerStage = 1;
  nlohmann::json aqsgdNote;  // AQ-SGD's buffer memory, shown before the run (null without AQ-SGD)

  // Each stage's blocks and parameter count, for the run's start event.
  nlohmann::json stagesDescription() const;
  // With pipeline.cuda_graphs on or auto: per stage of this process, its passes replayed from CUDA graphs, recorded
  // and run eagerly, and why it runs eagerly ("" while graphs are in use); null otherwise.
  nlohmann::json graphsReport() const;
};

// Connects the ranks (first: the others are waiting), loads the data, builds the model (from the configured
// checkpoint when there is one), cuts and places it. Throws ConfigError for a run that cannot be built, naming the
// setting to change.
BuiltRun buildRun(const Config& config, RankCoordinator& ranks);

}  // namespace ps
