#include "engine/models/StageModule.h"

#include <torch/torch.h>

namespace ps {

StageModule::StageModule(const BlockModel& model, size_t first, size_t last) : first_(first), last_(last) {
  for (size_t i = first; i < last; ++i) {
    blocks_.push_back(model.blocks[i]);
    register_module("b" + std::to_string(i), model.blocks[i].ptr());
  }
}

torch::Tensor StageModule::forward(torch::Tensor x) {
  for (auto& block : blocks_) x = block.forward<torch::Tensor>(x);
  return x;
}

}  // namespace ps
