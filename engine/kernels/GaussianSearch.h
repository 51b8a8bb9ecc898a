#pragma once
// The arithmetic of GaussianK's threshold search (Threshold.h, gaussianThreshold), written once for the CPU kernels
// and their CUDA twin (cuda/CudaSelect.cu), so that equal moments and counts give the same thresholds on both. Plain
// functions of numbers: no memory, no library calls that differ between host and device.
#include <cfloat>
#include <cstdint>

#if defined(__CUDACC__)
#define PS_HOST_DEVICE __host__ __device__
#else
#define PS_HOST_DEVICE
#endif

namespace ps::kernels {

// A threshold computed in double, as the float the search uses: finite values beyond float's range are clamped to
// ±FLT_MAX (a NaN stays NaN).
PS_HOST_DEVICE inline float clampFinite(double t) {
  return float(t < -double(FLT_MAX) ? -double(FLT_MAX) : (double(FLT_MAX) < t ? double(FLT_MAX) : t));
}

// The first threshold, mean + z·stddev, rounded once per operation on both sides: nvcc would fuse the two into one
// multiply-add, so the device spells them out; the host kernels are compiled without contraction (-ffp-contract=off).
PS_HOST_DEVICE inline float firstGaussianThreshold(double mean, double stddev, double z) {
#if defined(__CUDA_ARCH__)
  return clampFinite(__dadd_rn(mean, __dmul_rn(z, stddev)));
#else
  return clampFinite(mean + z * stddev);
#endif
}

// One move of the search after a selection of `count` where `k` were wanted: below 2k/3 the threshold halves, above
// 4k/3 it grows by half, and in the band it stays and the search ends (false).
PS_HOST_DEVICE inline bool moveGaussianThreshold(unsigned long long count, unsigned long long k, float* t) {
  if (3 * count < 2 * k) {
    *t = clampFinite(double(*t) / 2.0);
    return true;
  }
  if (3 * count > 4 * k) {
    *t = clampFinite(double(*t) * 1.5);
    return true;
  }
  return false;
}

// At most three selections: the move after the third is never made, so the set kept is the third one selected.
constexpr int kGaussianSelections = 3;

}  // namespace ps::kernels

#undef PS_HOST_DEVICE
