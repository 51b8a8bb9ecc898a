#pragma once
#include "engine/models/BlockModel.h"

namespace ps {
// A small residual CNN for 28x28 images: stem, residual blocks at three resolutions joined by strided
// downsampling blocks, and a linear head on the flattened features. GroupNorm keeps samples independent, so micro-batching
// does not change the result.
void appendResidualCnn(BlockModel& model, const ModelShape& shape, int64_t width, int64_t depth);
}  // namespace ps
