#pragma once
#include "engine/models/BlockModel.h"

namespace ps {
// A small decoder-only transformer language model: token + position embedding, pre-norm blocks of causal
// self-attention and an MLP, and a normalised linear head. LayerNorm and no dropout keep samples independent.
void appendTransformerLm(BlockModel& model, const ModelShape& shape, int64_t width, int64_t depth, int64_t heads);
}  // namespace ps
