#pragma once
// Exact top-k by magnitude with a radix select on the bit patterns of |x|.
//
// For non-negative IEEE floats the bit patterns order like the values, so |x| is turned into a 31-bit integer key
// and the k-th largest key is found digit by digit: a histogram pass over the high bits finds the bucket that holds
// the k-th largest, the next pass histograms the following bits inside that bucket only, and so on until the key is
// exact (2 passes for n >= 65536: 16 + 15 bits; 3 passes of 11 + 10 + 10 bits below, where zeroing big histograms
// would cost more than the data). Each thread histograms its own contiguous chunk; the per-chunk counts also say how
// many winners each chunk holds, so the final collection pass writes every chunk's winners straight to their place.
//
// Conventions:
//  * Ties are broken by lower index; indices come out ascending; `values` receives the signed x[i].
//  * NaN counts as larger than +inf, and all NaNs are equal (ties among them go by index). kthLargestAbs returns a
//    quiet NaN when the k-th largest is a NaN.
//  * -0.0 and +0.0 are equal.
//  * n is limited to kMaxElements (indices are uint32_t).
//  * Large inputs (n >= 65536, k up to ~20% of n) are first narrowed down: a strided sample of up to 8192 elements
//    gives a lower bound on the k-th largest, one vectorised pass keeps the candidates at or above it (index and
//    value), and the radix passes and the collection then run over the candidates only. When the bound turns out
//    wrong (fewer than k candidates, or a chunk holds more than its share) the plain radix select runs instead, so
//    the result is exact either way.
//  * Scratch: thread_local buffers that grow and are reused: the histograms (256 KiB per thread) and the candidate
//    lists (8 bytes per candidate slot, about 1.2 to 1.5 k slots); released when over 8M slots and more than 4x
//    what a call needed.
//  * `threads`: OpenMP threads for n >= 2^18 (smaller inputs run on the calling thread); <= 0 means
//    omp_get_max_threads(). The result does not depend on it.
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// Writes the k largest |x| (k clamped to n) as ascending indices and their signed values; returns the count written.
// k == 0 or n == 0 returns 0 without touching the outputs. `indices` and `values` must hold min(k, n) entries.
size_t topkSelect(const float* x, size_t n, size_t k, uint32_t* indices, float* values, int threads = 0);

// The k-th largest |x| (1-based: k == 1 is max|x|), i.e. what torch::kthvalue(-|x|, k) gives, negated.
// Throws KernelError unless 1 <= k <= n.
float kthLargestAbs(const float* x, size_t n, size_t k, int threads = 0);

// The integer key the selection orders by: the bits of |v|, with every NaN mapped to the quiet NaN 0x7fc00000.
uint32_t magnitudeKey(float v);

}  // namespace ps::kernels
