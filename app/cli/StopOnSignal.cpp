#include "app/cli/StopOnSignal.h"

#include <atomic>

namespace ps::cli {
namespace {

constexpr int kSignals[StopOnSignal::kCount] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<void (*)()> stopFunction{nullptr};
std::atomic<bool> asked{false};

extern "C" void onStopSignal(int sig) {
  if (asked.exchange(true)) {  // the second time: the user means it
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  if (auto stop = stopFunction.load()) stop();
}

}  // namespace

StopOnSignal::StopOnSignal(void (*stop)()) {
  stopFunction.store(stop);
  asked.store(false);
  for (int i = 0; i < kCount; ++i) {
    struct sigaction current {};
    sigaction(kSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;  // ignored by whoever started us: leave it so
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    installed_[i] = sigaction(kSignals[i], &action, &previous_[i]) == 0;
  }
}

StopOnSignal::~StopOnSignal() {
  for (int i = 0; i < kCount; ++i)
    if (installed_[i]) sigaction(kSignals[i], &previous_[i], nullptr);
  stopFunction.store(nullptr);
}

}  // namespace ps::cli
