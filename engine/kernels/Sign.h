#pragma once
// Scaled sign (docs/algorithms.md: x̂ = (‖x‖₁ / n) sign(x)), the bit work of it. Bit i is x[i] >= 0 (so +0 and -0 give 1,
// a NaN gives 0), packed LSB first into ceil(n / 8) bytes. `threads` as in Quantize.h (n >= 2^18 splits the work;
// <= 0 means omp_get_max_threads()); results never depend on the thread count.
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// Packs the sign bits into out (ceil(n / 8) bytes, unused high bits 0) and returns Σ|x[i]| (in double, BlockSum.h,
// over fixed blocks in a fixed order).
double signPack(const float* x, size_t n, uint8_t* out, int threads = 0);

// out[i] = bit i ? scale : -scale. Throws KernelError when inBytes < ceil(n / 8) or the unused bits of the last byte
// are not 0 (inBytes may be larger; the rest is not read).
void signUnpack(const uint8_t* in, size_t inBytes, size_t n, float scale, float* out, int threads = 0);

}  // namespace ps::kernels
