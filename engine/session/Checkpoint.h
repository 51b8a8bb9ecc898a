#pragma once
// Model checkpoints: every parameter by its global block name ("b3.conv1.weight"), the vocabulary and
// the config, so a later run can fine-tune from it whatever its stage count.
#include "engine/models/BlockModel.h"

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

}  // namespace ps
