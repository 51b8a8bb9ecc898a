#include "engine/session/Threads.h"

#include <torch/torch.h>

#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace ps {
namespace {
// Idle OpenMP workers sleep instead of spinning. The driver thread's team (evaluation, set-up) otherwise spins on
// sched_yield for LLVM's default 200 ms after every parallel region while the stage threads compute beside it:
// a third of a 4-stage CPU run's processor time went there. Set before any runtime reads it (they read it at their
// first OpenMP call), and only where the user has not chosen.
const bool kPassiveOpenMp = [] { return setenv("OMP_WAIT_POLICY", "passive", 0) == 0; }();
}  // namespace

void tuneAllocator() {
  static const bool once = [] {
    // Blocks up to 1 GiB come from the heap, freed memory is not trimmed back to the kernel below 1 GiB, and
    // the heap grows in 64 MiB steps.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    return true;
  }();
  (void)once;
}

int hardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

int configureThreads(int total, int stages) {
  tuneAllocator();
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
