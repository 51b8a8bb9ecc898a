#pragma once
// Starts the other ranks of a local multi-process run (what `pipesqueeze-cli launch` and the app do): ranks
// 1..N-1 run as `pipesqueeze-cli train` child processes with the torchrun-style variables set, reading the
// resolved configuration from a file; the calling process is rank 0 and keeps the run store. Children get their
// own process group, so Ctrl-C reaches rank 0 only, which stops every rank at the next step.
#include <nlohmann/json.hpp>

#include <string>
#include <sys/types.h>
#include <vector>

namespace ps {

class Launcher {
 public:
  Launcher(const nlohmann::json& config, int world, int port);
  ~Launcher();  // kills what still runs
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Waits up to `seconds` for the children to end, then kills the rest. Returns one line per child that did not
  // end well ("rank 2 exited with status 1", "rank 3 was killed by signal 9").
  std::vector<std::string> finish(double seconds);

  // $PIPESQUEEZE_CLI, else pipesqueeze-cli next to this executable (or in ../app from a build tree's tests).
  static std::string cliPath();

 private:
  std::vector<pid_t> pids_;
  std::string configFile_;
};

}  // namespace ps
