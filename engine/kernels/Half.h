#pragma once
// float <-> IEEE 754 binary16 (fp16) and bfloat16, round to nearest, ties to even, as plain integer arithmetic in
// branch-free loops the compiler vectorises (CUDA has native twins). On x86-64 CPUs with F16C (checked at run time;
// no compiler flags needed) the fp16 array conversions use it instead, with bit-identical results. `threads`: OpenMP
// threads for n >= 2^18; <= 0 means omp_get_max_threads().
//
// fp16: values beyond the largest half (65504, after rounding) become ±inf; results below the smallest normal
// (2^-14) become subnormal halves (correctly rounded) or ±0; inf stays inf; NaN becomes a quiet NaN keeping the sign
// and the top mantissa bits. bf16: the high 16 bits of the float, rounded; NaN stays a (quiet) NaN. halfToFloat and
// bf16ToFloat are exact (a signalling-NaN half comes back as a quiet NaN, as F16C does).
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

void floatToHalf(const float* x, size_t n, uint16_t* out, int threads = 0);
void halfToFloat(const uint16_t* in, size_t n, float* out, int threads = 0);
void floatToBf16(const float* x, size_t n, uint16_t* out, int threads = 0);
void bf16ToFloat(const uint16_t* in, size_t n, float* out, int threads = 0);

// Replaces every ±inf in h[0..n) (fp16 bits, or bf16 with `bf16`) by the largest finite value of its sign: a finite
// float too large for the format travels as that value, since no decoder accepts inf. The inputs being finite, the
// outputs are.
void saturateInfinities(uint16_t* h, size_t n, bool bf16);

// Tests and benchmarks: enable (the default where the CPU has it) or bypass the F16C path; returns whether the CPU
// has F16C. Not meant to be toggled while conversions run.
bool useF16c(bool enable);

// Single-value versions (the loops above use the same code).
uint16_t floatToHalf(float v);
float halfToFloat(uint16_t h);
uint16_t floatToBf16(float v);
float bf16ToFloat(uint16_t h);

}  // namespace ps::kernels
