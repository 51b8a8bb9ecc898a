#pragma once
// QSGD with s levels (docs/algorithms.md: x̂ = ‖x‖₂ sign(x) ξ / s, ξ the stochastic rounding of s|x|/‖x‖₂), per bucket of
// `bucket` consecutive values (bucket >= n: one norm for the tensor). Codes are c = s + sign(x) ξ in [0, 2s], one
// packed LSB first in bits = ceil(log2(2s + 1)) bits each (qsgdBits; BitPack.h's layout). ξ = floor(l) + Bernoulli(l - floor(l)) with l = |x| * (s / ‖x_b‖₂) in
// float, clamped to [0, s]; the Bernoulli draw uses the counter-based 24-bit uniforms of Random.h, so the codes do
// not depend on the thread count, and it is unbiased up to 2^-24 (exactly, for fractions on that grid). A zero norm
// sends zeros; a norm beyond float's range saturates to FLT_MAX (inf input too: codecs refuse it earlier, as divergence)
// and NaN input gives a NaN norm (which the payload decoder refuses), never undefined behaviour.
// Norms: sums of squares in double (BlockSum.h), per bucket in a fixed order.
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// Bits per code for s levels: ceil(log2(2s + 1)); levels in 1..127.
int qsgdBits(int levels);

// norms: ceil(n / bucket) entries; packed: packedBytes(n, qsgdBits(levels)) bytes.
void qsgdEncode(const float* x, size_t n, size_t bucket, int levels, uint64_t seed, float* norms, uint8_t* packed,
                int threads = 0);

// out[i] = norm * float(c - s) / float(s). Throws KernelError when inBytes is short, a code exceeds 2s or the unused
// bits of the last byte are not 0.
void qsgdDecode(const uint8_t* packed, size_t inBytes, size_t n, size_t bucket, int levels, const float* norms,
                float* out, int threads = 0);

}  // namespace ps::kernels
