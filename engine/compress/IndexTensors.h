#pragma once
// Index blocks (engine/kernels/Indices.h) written and read with tensor operations where the indices are: a sparse
// payload between two GPU stages keeps its selection on the devices. The bytes are the CPU encoder's: the same
// cheapest-format rule, little-endian absolute indices, LSB-first bitmaps, minimal LEB128 gaps. Blocks are read as
// untrusted (one may come from another process over NCCL), with decodeIndices's checks.
#include "engine/kernels/Indices.h"

#include <torch/types.h>

namespace ps {

struct IndexTensorBlock {
  kernels::IndexFormat format = kernels::IndexFormat::Absolute32;
  torch::Tensor payload;  // uint8, the block without its format byte, on the indices' device
};

// idx: int64, strictly ascending positions below n (the encoder's own selection), on any device.
IndexTensorBlock encodeIndexTensor(const torch::Tensor& idx, uint64_t n);
// The k positions (int64, ascending) a block's payload of `format` holds, on the payload's device. Throws PayloadError
// unless the payload is exactly one such block: its size, count, padding bits, minimal varints of at most five
// bytes, and positions strictly ascending below n. The checks of what the bytes say go through requireOnDevice
// (engine/tensors/DeviceChecks.h): while checks are deferred they fail when the scope settles, and until then the
// positions returned are still k values inside [0, n), so using them reads nothing out of bounds.
torch::Tensor decodeIndexTensor(kernels::IndexFormat format, const torch::Tensor& payload, uint64_t k, uint64_t n);

}  // namespace ps
