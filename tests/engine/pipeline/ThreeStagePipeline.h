#pragma once
// The compressed pipeline that tests of a step's mechanics train: Fashion-MNIST's CNN 16 wide and 6 blocks deep
// (seed 42) cut into three stages of two blocks, Adam at 0.01, the links' codecs as given (boundary 0, then 1).
#include "engine/pipeline/Pipeline.h"
#include "engine/runs/config/Config.h"

#include <utility>
#include <vector>

namespace ps::fixtures {

inline Pipeline threeStagePipeline(int microbatches, std::vector<CompressionOptions> forward,
                                   std::vector<CompressionOptions> backward, PipelineOptions o = {}) {
  const nlohmann::json j = {{"task", "fashion_mnist"}, {"model", {{"width", 16}, {"depth", 6}}}};
  BlockModel model = buildModel(Config::fromJson(j), ModelShape{}, 42);
  o.starts = {0, 2, 4};
  o.microbatches = microbatches;
  o.optimizer = {"adam", 1e-2, 0.9, 0};
  o.forward = std::move(forward);
  o.backward = std::move(backward);
  return Pipeline(std::move(model), o);
}

}  // namespace ps::fixtures
