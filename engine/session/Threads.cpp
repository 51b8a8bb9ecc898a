#include "engine/session/Threads.h"

#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <thread>

namespace ps {

int hardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

int configureThreads(int total, int stages) {
  if (total <= 0) total = hardwareThreads();
  const int perStage = std::max(1, total / std::max(1, stages));
  // OpenBLAS keeps one global pool: give it each stage's share so concurrent stages do not oversubscribe.
  // Looked up at run time because the BLAS in use is chosen by the system, not at link time.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(perStage);
  at::set_num_threads(total);  // the calling (driver) thread: evaluation and set-up use every thread
  return perStage;
}

}  // namespace ps
