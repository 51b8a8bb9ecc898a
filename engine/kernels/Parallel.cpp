#include "engine/kernels/Parallel.h"

#include <omp.h>

#include <algorithm>

namespace ps::kernels {

int resolveThreads(int threads, size_t n, size_t minPerThread) {
  if (n < kParallelMinElements) return 1;
  int t = threads > 0 ? threads : omp_get_max_threads();
  const size_t cap = std::max<size_t>(1, n / std::max<size_t>(1, minPerThread));
  if (size_t(t) > cap) t = int(cap);
  return std::max(1, t);
}

int threadsForWork(size_t work, size_t minPerThread) {
  const size_t cap = work / std::max<size_t>(1, minPerThread);
  return int(std::max<size_t>(1, std::min<size_t>(size_t(omp_get_max_threads()), cap)));
}

}  // namespace ps::kernels
