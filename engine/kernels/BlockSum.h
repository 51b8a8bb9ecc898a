#pragma once
// Σ f(x[i]) the way the kernels sum: float partial sums over blocks of 256 elements (plain float adds in every
// vector lane, so it vectorises at any width) accumulated in double. At most 64 terms per lane and block: relative
// error about 4e-6 at worst. Inline it into a PS_SIMD_CLONES function to get the AVX2 width there (Simd.h).
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cstddef>

namespace ps::kernels {

template <class F>
PS_ALWAYS_INLINE double blockSum(const float* x, size_t b, size_t e, F f) {
  double total = 0;
  for (size_t s = b; s < e; s += 256) {
    const size_t end = std::min(s + 256, e);
    double part = 0;
#pragma omp simd reduction(+ : part)
    for (size_t i = s; i < end; ++i) part += f(x[i]);
    total += part;
  }
  return total;
}

}  // namespace ps::kernels
