#pragma once
#include "engine/models/BlockModel.h"

#include <torch/nn/module.h>

namespace ps {

// Blocks [first, last) of a BlockModel, run in order. Submodules are named by their global block index
// ("b3"), so checkpoints and parameter comparisons line up whatever the cut.
class StageModule : public torch::nn::Module {
 public:
  StageModule(const BlockModel& model, size_t first, size_t last);
  torch::Tensor forward(torch::Tensor x);
  size_t first() const { return first_; }
  size_t last() const { return last_; }

 private:
  size_t first_, last_;
  std::vector<torch::nn::AnyModule> blocks_;
};

}  // namespace ps
