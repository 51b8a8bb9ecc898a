#pragma once
// Stream compaction by magnitude, shared by TopK and Threshold: the indices of the elements whose magnitude key
// (the bits of |x|, see TopK.h) is above a threshold key. On x86-64 it runs 4 elements at a time with SSE2 (baseline
// for the architecture, so no extra compiler flags): a compare, a movemask, and one 16-byte store of the matching
// offsets from a 16-entry table; blocks of 16 elements without a match cost one test. Where the CPU has AVX2
// (checked once at run time) it runs 8 at a time the same way, and selectAboveWithValues moves the selected values
// with the same table in a register permute instead of loading each one again. Elsewhere a branch-free scalar loop
// does the same. Every path returns exactly the same indices and values.
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// Room the outputs need beyond the selected count: the vector paths store whole groups of up to 8 lanes and advance
// by the matches.
inline constexpr size_t kSelectSlack = 8;

// Writes every i in [b, e) with (bits(x[i]) & 0x7fffffff) > T to out, ascending; returns the count. `out` must have
// room for (e - b) + kSelectSlack entries. Requires T <= 0x7f800000 (the key of +inf): then every NaN is above T, as
// the magnitude order says, without canonicalising.
size_t selectAbove(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out);

// selectAbove plus the selected values (values[j] = x[out[j]]); both outputs need (e - b) + kSelectSlack entries.
size_t selectAboveWithValues(const float* x, size_t b, size_t e, uint32_t T, uint32_t* out, float* values);

// Same for keys in [lo, hi] (same room); requires hi <= 0x7ffffffe (and, for the NaN order, hi <= 0x7f800000 where that
// matters to the caller). Returns 0 when lo > hi.
size_t selectInRange(const float* x, size_t b, size_t e, uint32_t lo, uint32_t hi, uint32_t* out);

// Number of i in [b, e) with (bits(x[i]) & 0x7fffffff) > T (vectorised by the compiler).
size_t countAboveKey(const float* x, size_t b, size_t e, uint32_t T);

}  // namespace ps::kernels
