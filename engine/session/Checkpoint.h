#pragma once
// Model checkpoints: every parameter by its global block name ("b3.conv1.weight"), the vocabulary and
// the config, so a later run can fine-tune from it whatever its stage count.
#include "engine/models/BlockModel.h"
#include "engine/models/CodeBottleneck.h"
#include "engine/runs/config/Config.h"

#include <string>
#include <utility>
#include <vector>

namespace ps {

void saveCheckpoint(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& parameters,
                    const std::string& vocab, const std::string& configJson);
// Reads the vocabulary stored with a checkpoint ("" when it has none).
std::string checkpointVocab(const std::string& path);
// Copies the checkpoint's parameters into `model`; names and shapes must match.
void loadCheckpoint(const std::string& path, BlockModel& model);
// Copies a checkpoint's learned bottleneck layers (code<boundary>_enc and _dec) into those of `bottlenecks` (null
// entries: boundaries without one) that it holds; shapes must match. One it does not hold keeps its start: a
// checkpoint of the model without a bottleneck there starts one.
void loadCheckpoint(const std::string& path, const std::vector<std::shared_ptr<Bottleneck>>& bottlenecks);
// Where run `runId` saves its checkpoint: run.checkpoint_file (run-<id>.pt when empty) in run.checkpoint_dir, else
// in "checkpoints" beside the run store at `storePath` (or in the working folder without a store). An absolute
// checkpoint_file replaces the folder.
std::string checkpointPath(const Config::Run& run, const std::string& storePath, int64_t runId);

}  // namespace ps
