#pragma once
// Threshold-based sparsification: counting and gathering the elements above a magnitude threshold, and the two
// approximate ways of picking that threshold for a target density K (GaussianK and a sampled, DGC-style threshold).
//
// Comparisons use the same magnitude order as TopK.h: NaN is above every threshold (even +inf), so a NaN in a
// gradient is sent rather than silently dropped; a negative threshold keeps everything. A NaN threshold is an error.
// `threads`: OpenMP threads for n >= 2^18; <= 0 means omp_get_max_threads(). Results do not depend on it.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ps::kernels {

// #{ i : |x[i]| > threshold }.
size_t countAbove(const float* x, size_t n, float threshold, int threads = 0);

// Writes every i with |x[i]| > threshold in ascending order to (indices, values) and returns the count. Only the
// first `capacity` are written; the full count is returned even when it is larger. One pass: on several threads the
// chunks after the first go through thread_local spill buffers (grown as needed and kept for the next call, unless
// over 4M entries and more than 4x what the call needed).
size_t gatherAbove(const float* x, size_t n, float threshold, uint32_t* indices, float* values, size_t capacity,
                   int threads = 0);

struct Moments {
  double mean, stddev;
};

// Mean and standard deviation of the signed values, accumulated around x[0] (so a large common offset does not
// cancel): in float within blocks of 64 values (fast: SSE2 lanes), in double across blocks; relative error about
// 1e-6 at worst. stddev uses Bessel's correction (n - 1, as torch::std does by default); 0 for n == 1.
// NaN or inf in x give non-finite moments. Throws KernelError for n == 0.
Moments moments(const float* x, size_t n, int threads = 0);

// The moments GaussianK starts from: of every element, or of the finite ones when those are not finite (non-finite
// elements, or magnitudes near FLT_MAX that overflow the float blocks). Throws KernelError for n == 0.
Moments gaussianMoments(const float* x, size_t n, int threads = 0);

// The standard normal quantile Φ⁻¹(p): Acklam's rational approximation refined by one Halley step (Newton with the
// second-order term) on the lower half, mirrored for p > 0.5; absolute error below 1e-9 (about 1e-15 in practice).
// Returns -inf / +inf at p = 0 / 1; throws KernelError for p outside [0, 1] or NaN.
double inverseNormalCdf(double p);

// GaussianK's k = max(1, round(K n)) and z = Φ⁻¹(1 − K/2), for searches that run elsewhere (a GPU's).
size_t gaussianTarget(size_t n, double K);
double gaussianQuantile(double K);

// GaussianK (docs/algorithms.md), as its authors' code runs it: k = max(1, round(K n)); t = μ + zσ with
// z = Φ⁻¹(1 − K/2) and μ, σ of the signed values; then at most three selections c = #{|x| > t}, the threshold moving
// after the first two when c is outside [2k/3, 4k/3] (c < 2k/3 → t/2, c > 4k/3 → 1.5t). The authors' loop also moves
// it after the third selection but never selects with that threshold, so neither does this. Returns the threshold of
// the last selection and stores its count in *count (when count is not null). Non-finite elements are left out of μ
// and σ (and, like NaN, always count as above t). t is clamped to ±FLT_MAX, so it is always finite. Off the normal
// the count can land far from k either way (heavy tails inflate σ; a ReLU's half-normal overshoots): approximate by
// design.
// Throws KernelError unless 0 < K <= 1 and n >= 1.
float gaussianThreshold(const float* x, size_t n, double K, size_t* count, int threads = 0);

// GaussianK selection in as few passes as possible: the same threshold sequence as gaussianThreshold, but each
// candidate is tried by gathering straight into (indices, values) instead of counting first, so the usual case
// (the first estimate lands in [2k/3, 4k/3]) reads x twice (moments, gather) rather than three times. Returns
// #{|x| > t} for the final t (stored in *threshold); only min(count, capacity) winners are written, so a caller whose
// capacity was short gathers again with gatherAbove(x, n, *threshold, ...) and the exact count.
size_t gaussianGather(const float* x, size_t n, double K, uint32_t* indices, float* values, size_t capacity,
                      float* threshold, int threads = 0);

// DGC-style threshold, as the Gaussian-k authors' `dgcsampling` runs it: draws m = max(1, round(sampleFraction n))
// (at most n) distinct elements uniformly without replacement (Floyd's algorithm on std::mt19937_64 seeded with
// `seed`, own unbiased integer draw, so the sample is the same on every platform) and returns the exact k-th largest
// |x| of the sample with the full tensor's k = max(1, round(K n)), or its smallest where k > m. That threshold is low
// on purpose: about 1/sampleFraction times k elements pass it, and the caller trims the survivors to the exact top k
// when more than 4k/3 pass (countAbove/gatherAbove, then topkSelect). With sampleFraction 1 it is the exact k-th
// largest of x. A NaN k-th largest gives +inf (then only NaNs are above). Uses thread_local buffers (m floats, n bits).
// Throws KernelError unless 0 < K <= 1, 0 < sampleFraction <= 1 and n >= 1.
float sampledThreshold(const float* x, size_t n, double K, double sampleFraction, uint64_t seed, int threads = 0);

// The two halves of sampledThreshold, for data the host cannot read directly: the positions it samples, in its
// order (replaces `positions`), and the threshold from the m sampled values (x at those positions) of a tensor of n.
void samplePositions(size_t n, double sampleFraction, uint64_t seed, std::vector<uint32_t>& positions);
float sampleThreshold(const float* sample, size_t m, size_t n, double K, int threads = 0);

}  // namespace ps::kernels
