#pragma once
// The training and evaluation tensors of a task, built from the data readers.
#include "engine/models/BlockModel.h"
#include "engine/runs/config/Config.h"

#include <torch/types.h>

namespace ps {

struct TaskData {
  ModelShape shape;
  torch::Tensor train_x, train_y, eval_x, eval_y;  // dimension 0 indexes samples
  std::string vocab;                               // language models: the serialised character vocabulary
  std::string description;                         // for the run's start event

  int64_t trainSize() const { return train_x.size(0); }
  int64_t evalSize() const { return eval_x.size(0); }
};

// Loads the data `config.task` names. `vocab` (serialised) fixes the LM's vocabulary, as when fine-tuning
// from a checkpoint; empty builds it from the training text. Throws with the file and the install command.
TaskData loadTaskData(const Config& config, const std::string& vocab = "");

}  // namespace ps
