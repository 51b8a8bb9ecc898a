#pragma once
// Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) ask the CLI's current work to stop cleanly through `stop`
// (which must be async-signal-safe: an atomic store); a second one ends the process at once. Signals the parent ignores
// (a background job's SIGINT) stay ignored. The previous handlers come back when the guard goes, exceptions included.
#include <csignal>

namespace ps::cli {

class StopOnSignal {
 public:
  explicit StopOnSignal(void (*stop)());
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  static constexpr int kCount = 3;

 private:
  struct sigaction previous_[kCount];
  bool installed_[kCount] = {false, false, false};
};

}  // namespace ps::cli
