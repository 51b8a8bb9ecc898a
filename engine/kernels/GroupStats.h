#pragma once
// Per-group statistics for the quantizers (Quantize.h): groups are runs of `group` consecutive values (the last one
// shorter when group does not divide n); group >= n means one group for the whole tensor. Per-channel scaling is
// the caller's job (it transposes so a channel's values are contiguous, or passes group = channel size).
// `threads`: OpenMP threads for n >= 2^18 (over groups, or inside a group when there are few); <= 0 means
// omp_get_max_threads().
#include <cstddef>

namespace ps::kernels {

// ceil(n / group); throws KernelError for group == 0.
size_t groupCount(size_t n, size_t group);

// End of group g (its start is g * group); the last group may be shorter.
inline size_t groupEnd(size_t n, size_t group, size_t g) {
  const size_t b = g * group;  // <= n for every existing group
  return b + (group < n - b ? group : n - b);
}

// scales[g] = max |x| over group g. A NaN in the group makes its scale NaN (the group then decodes as NaN, so bad
// data stays visible); ±inf gives inf.
void groupMaxAbs(const float* x, size_t n, size_t group, float* scales, int threads = 0);

// mins[g], maxs[g] = min and max over group g; both NaN when the group holds a NaN.
void groupMinMax(const float* x, size_t n, size_t group, float* mins, float* maxs, int threads = 0);

// True when no element is NaN or ±inf: one branch-free pass (vectorised), for decoders checking untrusted values.
bool allFinite(const float* x, size_t n);

}  // namespace ps::kernels
