#pragma once
// The multi-process side of a session: which ranks take part (given options, the torchrun-style environment, or
// the config asking for processes, in which case this process launches the others and is rank 0), the connection
// to them, and what every rank must agree on: the stage cuts, the gradient backend, the commands of each step, why
// the run failed, and how the launched ranks ended. A single-process run has an inactive coordinator, and every
// call is then a no-op or gives this process's own answer, so the session reads the same either way.
#include "engine/dist/Cluster.h"
#include "engine/dist/Launcher.h"
#include "engine/runs/config/Config.h"
#include "engine/session/CommandQueue.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ps {

class RankCoordinator {
 public:
  // Where this process is among the ranks; without it, the environment decides (ClusterOptions::fromEnvironment).
  void setOptions(const ClusterOptions& options) { options_ = options, optionsSet_ = true; }

  // Decides the ranks for `config` and connects to them (blocks until all are there); starts the other ranks first
  // when the config asks for processes and nobody else started them. Throws ConfigError when the world does not
  // fit the config, ClusterError when a rank does not come.
  void connect(const Config& config);
  bool active() const { return cluster_ != nullptr; }
  const std::shared_ptr<Cluster>& cluster() const { return cluster_; }
  int rank() const { return cluster_ ? cluster_->rank() : 0; }
  int world() const { return cluster_ ? cluster_->world() : 1; }
  // This process among the ranks on its machine (LOCAL_RANK, SLURM_LOCALID), else its rank: which GPU it takes.
  int localRank() const {
    return cluster_ && cluster_->options().local_rank >= 0 ? cluster_->options().local_rank : rank();
  }
  bool launched() const;  // this process started the other ranks

  // Threads for each stage of this process: the cores of this machine over the processes on it.
  int threadsPerStage(const Config& config) const;
  // Rank 0's stage cuts, checked against this rank's model of `blocks` blocks (measured cuts differ by process).
  std::vector<size_t> agreeOnCuts(const std::vector<size_t>& mine, size_t blocks, int stages);
  // Rank 0's answer for everyone (a choice every rank must make alike, such as the gradient backend).
  bool agreeOnFlag(bool mine);

  // One step's commands, as rank 0 took them from its queue; `turn` is read on rank 0 only.
  struct Commands {
    std::vector<Command> sets;
    bool stop = false, paused = false;
  };
  Commands shareCommands(const CommandQueue::Turn& turn);

  // Test hook for fault handling: PIPESQUEEZE_FAULT=RANK:STEP:kill|hang makes that rank die (SIGKILL) or hang
  // (SIGSTOP) when it reaches that step, as a crashed or wedged machine would.
  void injectFault(int64_t step) const;
  // The run's failure as rank 0 tells it: the ranks that stopped responding, else the ranks' own errors, with every
  // rank's report; on other ranks, and in a single process, `local` itself.
  std::string failureReason(const std::string& local, double timeout_s);
  // Waits for the launched ranks to end (up to `seconds`); one line per rank that did not end well.
  std::vector<std::string> awaitLaunched(double seconds);
  // From any thread: kills the launched ranks (nothing when none were launched).
  void abortLaunched() noexcept;

 private:
  ClusterOptions decide(const Config& config);

  ClusterOptions options_;
  bool optionsSet_ = false;
  mutable std::mutex launcherMutex_;  // launcher_ is set on the training thread, read by abortLaunched()
  std::unique_ptr<Launcher> launcher_;
  std::shared_ptr<Cluster> cluster_;
};

}  // namespace ps
