#pragma once
// Stream compaction by magnitude, shared by TopK and Threshold: the indices of the elements whose magnitude key
// (the bits of |x|, see TopK.h) is above a threshold key. On x86-64 it runs 4 elements at a time with SSE2 (baseline
// for the architecture, so no extra compiler flags): a compare, a movemask, and one 16-byte store of the matching
// offsets from a 16-entry table; blocks of 16 elements without a match cost one test. Elsewhere a branch-free
// scalar loop does the same.
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// Writes every i in [b, e) with (bits(x[i]) & 0x7fffffff) > T to out, ascending; returns the count. `out` must have
// room for (e - b) + 4 entries (the vector path stores whole groups of 4 and advances by the matches). Requires
// T <= 0x7f800000 (the key of +inf): then every NaN is above T, as the magnitude order says, without canonicalising.
size_t selectAbove(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out);

// Same for keys in [lo, hi]; requires hi <= 0x7ffffffe (and, for the NaN order, hi <= 0x7f800000 where that
// matters to the caller). Returns 0 when lo > hi.
size_t selectInRange(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out);

// Number of i in [b, e) with (bits(x[i]) & 0x7fffffff) > T (vectorised by the compiler).
size_t countAboveKey(const float* x, size_t b, size_t e, uint32_t T);

}  // namespace ps::kernels
