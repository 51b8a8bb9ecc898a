#pragma once
#include "engine/models/BlockModel.h"
#include "engine/models/CodeBottleneck.h"

#include <torch/nn/module.h>

namespace ps {

// Blocks [first, last) of a BlockModel, run in order. Submodules are named by their global block index
// ("b3"), so checkpoints and parameter comparisons line up whatever the cut. A learned bottleneck on a boundary adds
// its decoder before the first block of the stage after it and its encoder after the last block of the stage before
// it, named by the boundary ("code1_dec", "code1_enc").
class StageModule : public torch::nn::Module {
 public:
  StageModule(const BlockModel& model, size_t first, size_t last);
  // The decoder of the bottleneck on the boundary into this stage, and the encoder of the one out of it.
  void attach(const std::shared_ptr<Bottleneck>& in, const std::shared_ptr<Bottleneck>& out);
  torch::Tensor forward(torch::Tensor x);
  // With an encoder: what the last forward pass fed it (the activation its code stands for), until the next pass.
  const torch::Tensor& beforeCode() const { return beforeCode_; }
  void forgetBeforeCode() { beforeCode_ = torch::Tensor(); }
  // Whether the stage ends in a bottleneck's encoder.
  bool encodes() const { return !encoder_.is_empty(); }
  size_t first() const { return first_; }
  size_t last() const { return last_; }

 private:
  size_t first_, last_;
  std::vector<torch::nn::AnyModule> blocks_;
  CodeProjection decoder_{nullptr}, encoder_{nullptr};
  torch::Tensor beforeCode_;
};

}  // namespace ps
