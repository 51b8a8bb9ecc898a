#include "engine/kernels/Random.h"

#include "engine/kernels/Simd.h"

namespace ps::kernels {

namespace {

PS_ALWAYS_INLINE void uniformsBody(size_t b, size_t e, uint64_t hseed, uint32_t* u) {
  size_t i = b;
  for (; i + 2 <= e; i += 2) {
    const uint64_t h = splitmix64(hseed ^ uint64_t(i >> 1));
    u[i - b] = uint32_t(h >> 8) & 0xffffffu;
    u[i - b + 1] = uint32_t(h >> 40);
  }
  if (i < e) u[i - b] = uint32_t(splitmix64(hseed ^ uint64_t(i >> 1)) >> 8) & 0xffffffu;
}

// SSE2 has no vector 64-bit multiply, and GCC's emulation of one is slower than the scalar loop: keep it scalar.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
void uniformsScalar(size_t b, size_t e, uint64_t hseed, uint32_t* u) {
  uniformsBody(b, e, hseed, u);
}

#if defined(PS_X86_DISPATCH)
// AVX2 emulates the 64-bit multiplies with three 32-bit ones, four lanes wide: about twice the scalar rate.
__attribute__((target("avx2"))) void uniformsAvx2(size_t b, size_t e, uint64_t hseed, uint32_t* u) {
  uniformsBody(b, e, hseed, u);
}
#endif

}  // namespace

void uniforms24(size_t b, size_t e, uint64_t hseed, uint32_t* u) {
#if defined(PS_X86_DISPATCH)
  if (cpuHasAvx2()) return uniformsAvx2(b, e, hseed, u);
#endif
  uniformsScalar(b, e, hseed, u);
}

}  // namespace ps::kernels
