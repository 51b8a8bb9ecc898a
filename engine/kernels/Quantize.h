#pragma once
// Q_b (docs/algorithms.md): b-bit quantization (b in 1..8) with one scale per group of `group` consecutive values
// (group >= n: one scale for the tensor; groups and their statistics are in GroupStats.h), codes bit-packed LSB first
// into packedBytes(n, b) = ceil(n b / 8) bytes (BitPack.h). No per-element division: each group's reciprocal is
// computed once. Work is split over threads (n >= 2^18; threads <= 0 means omp_get_max_threads()) in chunks of whole
// bytes, so the output never depends on the thread count.
//
// Symmetric max-abs (s = scales[g], normally max|x| over the group, h = 2^(b-1)):
//   b >= 2: q = clamp(round(x / s * h), -h, h - 1), code = q + h, x̂ = q * s / h  -- exactly as docs/algorithms.md writes it.
//           Nearest rounding keeps |x - x̂| <= s / h / 2 (half a step) for every x in [-s, s - s/(2h)]. The formula
//           has no code for +s (its top code is h - 1), so the values in (s - s/(2h), s] -- the group's maximum
//           itself when it is positive -- are clamped and err by up to one full step s / h. That is inherent in the
//           formula (2^b levels, a level at 0 and at -s), not a rounding problem.
//   b == 1: the formula would give the levels {-s, 0} and lose every positive value, so 1 bit uses the sign:
//           code = x >= 0, x̂ = ±s/2 (the two cell centres of [-s, s]); the half-step bound |x - x̂| <= s/2 holds for
//           every |x| <= s. Stochastic rounding between -s/2 and +s/2 is unbiased for |x| <= s/2.
// Asymmetric min-max (2^b levels over [min, max], L = 2^b - 1): code = round((x - min) / (max - min) * L),
//   x̂ = min + code * (max - min) / L; nearest error <= (max - min) / L / 2 for every x in [min, max].
// "round" is round half up. Stochastic rounding: floor(v) + Bernoulli(v - floor(v)) with a 24-bit uniform per
// element from a counter-based generator: h = splitmix64(splitmix64(seed) ^ (i / 2)), bits 8..31 of h for even i and
// bits 40..63 for odd i. Unbiased (exactly, for the float v) except where a value is clamped; independent of the
// thread count. A zero scale (or min == max) encodes the group as exact zeros (min). Non-finite
// scales never cause undefined behaviour: the codes are clamped in float before conversion (a NaN maps to code 0).
#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"

#include <cstddef>
#include <cstdint>

namespace ps::kernels {

enum class Rounding { Nearest, Stochastic };

// scales: groupCount(n, group) entries; out: packedBytes(n, bits) bytes (unused high bits of the last byte are 0).
void quantizePackSymmetric(const float* x, size_t n, int bits, size_t group, const float* scales, Rounding r,
                           uint64_t seed, uint8_t* out, int threads = 0);

// Reads packedBytes(n, bits) bytes from `in` (inBytes may be larger; the rest is not read). Throws KernelError when
// inBytes is too small or the unused bits of the last byte are not 0.
void unpackDequantizeSymmetric(const uint8_t* in, size_t inBytes, size_t n, int bits, size_t group,
                               const float* scales, float* out, int threads = 0);

void quantizePackMinMax(const float* x, size_t n, int bits, size_t group, const float* mins, const float* maxs,
                        Rounding r, uint64_t seed, uint8_t* out, int threads = 0);

void unpackDequantizeMinMax(const uint8_t* in, size_t inBytes, size_t n, int bits, size_t group, const float* mins,
                            const float* maxs, float* out, int threads = 0);

}  // namespace ps::kernels
