#include "engine/dist/Launcher.h"

#include "engine/dist/Cluster.h"
#include "engine/errors/ConfigError.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

extern char** environ;

namespace ps {
namespace fs = std::filesystem;

std::string Launcher::cliPath() {
  if (const char* v = std::getenv("PIPESQUEEZE_CLI"); v && *v) {
    if (::access(v, X_OK) != 0)
      throw ConfigError(std::string("PIPESQUEEZE_CLI = '") + v + "' is not an executable; point it at pipesqueeze-cli");
    return v;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& candidate :
         {self.parent_path() / "pipesqueeze-cli", self.parent_path() / "../app/pipesqueeze-cli",
          self.parent_path() / "../../app/pipesqueeze-cli"})
      if (::access(candidate.c_str(), X_OK) == 0) return fs::weakly_canonical(candidate).string();
  throw ConfigError("a multi-process run starts its other ranks with pipesqueeze-cli, which is not next to " +
                    self.string() + "; set PIPESQUEEZE_CLI to its path");
}

namespace {

// The configuration travels in an anonymous in-memory file the children inherit (/dev/fd/N): nothing is written to
// disk, so nothing is left behind however this process ends, and no other user can read or swap it.
int configInMemory(const nlohmann::json& config) {
  const int fd = ::memfd_create("pipesqueeze-launch", 0);  // no close-on-exec: the children inherit it
  if (fd < 0)
    throw ConfigError(std::string("cannot create the launch configuration in memory: ") + std::strerror(errno));
  const std::string text = config.dump();
  if (::write(fd, text.data(), text.size()) != ssize_t(text.size())) {
    const int error = errno;
    ::close(fd);
    throw ConfigError(std::string("cannot write the launch configuration: ") + std::strerror(error));
  }
  return fd;
}

// This process's environment without the variables a rank is given its own value of, so none appears twice.
std::vector<std::string> inheritedEnvironment() {
  std::vector<std::string> base;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    const std::string name = v.substr(0, v.find('='));
    bool ours = false;
    for (const char* drop : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE", "LOCAL_RANK",
                             Launcher::kLauncherPidVariable, kStoreTokenVariable})
      ours = ours || name == drop;
    if (!ours) base.push_back(v);
  }
  return base;
}

std::vector<char*> nullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts one rank in its own process group with default signal handling, its stdout discarded (rank 0 reports).
// Returns posix_spawn's error code, 0 on success.
int spawnRank(const std::string& cli, std::vector<std::string> args, std::vector<std::string> env, pid_t& pid) {
  std::vector<char*> argv = nullTerminated(args), envp = nullTerminated(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  const int rc = posix_spawn(&pid, cli.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

Launcher::Launcher(const nlohmann::json& config, int world, int port, const std::string& storeToken) {
  const std::string cli = cliPath();
  configFd_ = configInMemory(config);
  const std::string configPath = "/dev/fd/" + std::to_string(configFd_);
  const std::vector<std::string> base = inheritedEnvironment();
  for (int rank = 1; rank < world; ++rank) {
    std::vector<std::string> env = base;
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(world));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(world));
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back("MASTER_PORT=" + std::to_string(port));
    env.push_back(std::string(kLauncherPidVariable) + "=" + std::to_string(::getpid()));
    env.push_back(std::string(kStoreTokenVariable) + "=" + storeToken);  // /proc/PID/environ: owner-readable only
    pid_t pid = 0;
    if (const int rc = spawnRank(cli, {cli, "train", "--preset", configPath}, std::move(env), pid); rc != 0) {
      finish(0);
      throw ConfigError("cannot start rank " + std::to_string(rank) + " (" + cli + "): " + std::strerror(rc));
    }
    pids_.push_back(pid);
  }
  ::close(configFd_);  // every child holds its own copy of the descriptor
  configFd_ = -1;
}

void Launcher::followLauncher() {
  const char* v = std::getenv(kLauncherPidVariable);
  if (!v || !*v) return;
  const pid_t launcher = pid_t(std::strtol(v, nullptr, 10));
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);          // the launcher's death ends this rank at once
  if (::getppid() != launcher) std::_Exit(3);  // it died before the line above: end now, as it would have made us
}

Launcher::~Launcher() {
  finish(0);
}

void Launcher::killAll() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  for (pid_t pid : pids_)
    if (pid > 0) ::kill(pid, SIGKILL);  // unreaped children only (finish() clears what it reaps under the lock)
}

std::vector<std::string> Launcher::finish(double seconds) {
  std::vector<std::string> problems;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    const std::string who = "rank " + std::to_string(i + 1);
    int status = 0;
    pid_t done = 0;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done = ::waitpid(pids_[i], &status, WNOHANG);
        if (done > 0) pids_[i] = -1;  // reaped: its number is free, killAll() must not signal it
      }
      if (done < 0 && errno == EINTR) continue;
      if (done != 0 || std::chrono::steady_clock::now() >= until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (done < 0) {
      // Reaped elsewhere, so its number may already belong to another process: it is never signalled.
      problems.push_back(who + " was reaped by another part of this process; its exit status is unknown");
    } else if (done == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      ::kill(pids_[i], SIGKILL);  // not reaped yet, so the number is still this child's
      ::waitpid(pids_[i], &status, 0);
      if (seconds > 0) problems.push_back(who + " did not end and was killed");
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      problems.push_back(who + " exited with status " + std::to_string(WEXITSTATUS(status)));
    } else if (WIFSIGNALED(status)) {
      problems.push_back(who + " was killed by signal " + std::to_string(WTERMSIG(status)));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    pids_[i] = -1;
  }
  if (configFd_ >= 0) ::close(configFd_);
  configFd_ = -1;
  return problems;
}

}  // namespace ps
