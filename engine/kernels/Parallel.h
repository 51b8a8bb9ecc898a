#pragma once
// How the kernels split work over OpenMP threads. Work is cut into `parts` contiguous, equally sized chunks (chunk t
// covers lower indices than chunk t+1), so results that depend on order (ties, stochastic rounding) never depend on
// which OS thread ran a chunk, and per-chunk counts from one pass line up with the chunks of the next pass.
#include <cstddef>

namespace ps::kernels {

// Below this many elements the kernels run on the calling thread: the fork/join costs more than it saves.
inline constexpr size_t kParallelMinElements = size_t(1) << 18;

// Threads to use for n elements: 1 when n < kParallelMinElements, otherwise `threads`, where threads <= 0 means
// omp_get_max_threads(). Never more than one thread per `minPerThread` elements.
int resolveThreads(int threads, size_t n, size_t minPerThread = size_t(1) << 16);

// Threads for `work` units of heavier per-unit work (index coding, say) that pays from fewer elements: at most
// omp_get_max_threads(), and one per `minPerThread` units.
int threadsForWork(size_t work, size_t minPerThread);

struct Range {
  size_t begin, end;
  size_t size() const { return end - begin; }
};

// Chunk t of `parts` over [0, n); chunk boundaries are multiples of `align` (except n itself).
inline Range chunkOf(size_t n, int parts, int t, size_t align = 1) {
  const size_t units = (n + align - 1) / align;
  const size_t b = units * size_t(t) / size_t(parts) * align;
  const size_t e = units * size_t(t + 1) / size_t(parts) * align;
  return {b < n ? b : n, e < n ? e : n};
}

}  // namespace ps::kernels
