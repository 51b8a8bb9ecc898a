#pragma once
// The two pieces of PowerSGD's arithmetic that the per-message codec and the replicas' all-reduce share: orthonormal
// columns by Gram-Schmidt, and the standard normal draws a factor starts from (the same on every machine and every
// replica that uses the same seed).
#include <torch/torch.h>

#include <cstdint>

namespace ps::lowrank {

// Modified Gram-Schmidt on the columns of P (n x r, r small, float32), in double, each column orthogonalised twice
// ("twice is enough" in float). A column that loses all but 1e-4 of its norm lies in the span of the ones before (the
// matrix has rank below r): it becomes zero rather than normalised rounding noise, which would point anywhere.
void orthonormalizeColumns(torch::Tensor& P);

// Fills column c of q (m x r, float32, contiguous) with standard normal values drawn by Box-Muller from a
// counter-based stream keyed by `key`.
void drawNormalColumn(torch::Tensor& q, int64_t c, uint64_t key);

}  // namespace ps::lowrank
