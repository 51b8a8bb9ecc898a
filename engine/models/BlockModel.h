#pragma once
// A model as an ordered list of blocks, so it can be cut into pipeline stages anywhere between two blocks.
#include "engine/core/Metrics.h"  // TaskKind
#include "engine/runs/config/Config.h"

#include <torch/nn/modules/container/any.h>
#include <torch/types.h>

#include <string>
#include <vector>

namespace ps {

struct BlockModel {
  TaskKind kind = TaskKind::Classifier;
  int64_t outputs = 0;  // classes or vocabulary size
  std::vector<torch::nn::AnyModule> blocks;
  std::vector<std::string> names;  // "stem", "res1", "attn3", ...

  size_t size() const { return blocks.size(); }
  int64_t parameterCount(size_t block) const;
};

// What the data says the model must fit.
struct ModelShape {
  TaskKind kind = TaskKind::Classifier;
  int64_t input_channels = 1, input_height = 28, input_width = 28;  // images
  int64_t input_features = 0;                                       // flat vectors (synthetic)
  int64_t outputs = 10;                                             // classes or vocabulary
  int64_t context = 64;                                             // tokens
};

// Builds the model for `config.task`, its parameters drawn from `seed` (the same for any stage count).
BlockModel buildModel(const Config& config, const ModelShape& shape, uint64_t seed);

// Mean loss of a micro-batch and, for classifiers, the count of correct predictions.
torch::Tensor lossOf(TaskKind kind, const torch::Tensor& output, const torch::Tensor& target);
int64_t correctOf(TaskKind kind, const torch::Tensor& output, const torch::Tensor& target);
// The same count as a 0-dim int64 tensor on the output's device, read when the caller chooses.
torch::Tensor hitsOf(TaskKind kind, const torch::Tensor& output, const torch::Tensor& target);

}  // namespace ps
