#pragma once
// Starts the other ranks of a local multi-process run (what `pipesqueeze-cli launch` and the app do): ranks
// 1..N-1 run as `pipesqueeze-cli train` child processes with the torchrun-style variables set, reading the
// resolved configuration from an inherited in-memory file; the calling process is rank 0 and keeps the run store.
// Children get their own process group, so Ctrl-C reaches rank 0 only, which stops every rank at the next step;
// and they die with the thread that launched them (a killed launcher leaves no rank behind).
#include <nlohmann/json.hpp>

#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ps {

class Launcher {
 public:
  // `storeToken` reaches the children in their environment, so only they can join rank 0's rendezvous store.
  Launcher(const nlohmann::json& config, int world, int port, const std::string& storeToken);
  ~Launcher();  // kills what still runs
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Waits up to `seconds` for the children to end, then kills the rest. Returns one line per child that did not
  // end well ("rank 2 exited with status 1", "rank 3 was killed by signal 9").
  std::vector<std::string> finish(double seconds);
  // Kills every rank still running, from any thread (a window closing on a run whose ranks hang): rank 0's
  // process groups then fail at once instead of after the timeout.
  void killAll() noexcept;

  // $PIPESQUEEZE_CLI, else pipesqueeze-cli next to this executable (or in ../app from a build tree's tests).
  static std::string cliPath();

  // In a launched rank (the launcher sets kLauncherPidVariable): asks the kernel to kill this process when its
  // launcher dies, and exits at once if that already happened. Call first thing in a child's main path.
  static void followLauncher();
  static constexpr const char* kLauncherPidVariable = "PIPESQUEEZE_LAUNCHER_PID";

 private:
  std::mutex mutex_;  // pids_: finish() reaps while killAll() may signal from another thread
  std::vector<pid_t> pids_;
  int configFd_ = -1;
};

}  // namespace ps
