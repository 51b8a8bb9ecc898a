#pragma once
// Wider SIMD for the hottest loops without raising the build's target. The build sets no -march (CI machines vary),
// so plain code is x86-64 baseline (SSE2, 4 floats per instruction). A function marked PS_SIMD_CLONES is compiled
// twice, for that baseline and for AVX2 (8 floats), and the loader picks the AVX2 copy once on CPUs that have it
// (target_clones: an ifunc, resolved at load time; GCC and Clang on x86-64 Linux).
//
// Only AVX2 is named, never FMA: a fused multiply-add rounds once where the baseline rounds twice, which would move
// quantized codes between machines, and a sender and its receiver must agree bit for bit. Element-wise results
// (codes, decoded values, selections) are therefore exactly the same on every path. Sums are not: a vectorised
// reduction adds in lane order, so moments, norms and the sign scale may differ in their last bits between SSE2 and
// AVX2. Those only steer the sender (GaussianK's threshold) or travel in the payload (QSGD norms, the sign scale), so
// the receiver never recomputes them. Helpers called from a cloned function get the wider code only when
// inlined into it: mark them PS_ALWAYS_INLINE. Keep OpenMP pragmas out of cloned functions (their outlined bodies
// would not be cloned); clone the per-chunk work they call instead.
//
// ThreadSanitizer instruments the loader's resolver functions, which run during relocation before its runtime is up,
// so a TSan build crashes at load: such builds take the baseline paths only (the AVX2 ones are the same code, wider).
#if defined(__SANITIZE_THREAD__)
#define PS_NO_SIMD_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PS_NO_SIMD_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PS_NO_SIMD_CLONES)
#define PS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PS_SIMD_CLONES
#endif

// Hand-written AVX2 paths (intrinsics, or loops that must stay scalar on the baseline) are dispatched explicitly:
// PS_X86_DISPATCH is defined where they are compiled, and cpuHasAvx2() asks the CPU once.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(PS_NO_SIMD_CLONES)
#define PS_X86_DISPATCH 1
namespace ps::kernels {
inline bool cpuHasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}
}  // namespace ps::kernels
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define PS_ALWAYS_INLINE inline
#endif
