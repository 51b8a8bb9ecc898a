#pragma once
// Runs pipesqueeze-cli as a child process, as a user would, capturing its output to files.
#include "engine/runs/store/RunStore.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ps::test {

// A run store path `name`.sqlite in a folder of this test process (`folder`-PID under the temp folder), with no
// file, -wal or -shm left from an earlier test.
inline std::string freshStoreIn(const std::string& folder, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (folder + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / (name + ".sqlite")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

// The pids of the live (not zombie) processes whose parent is `parent`.
inline std::vector<pid_t> childrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent && state != 'Z')
      out.push_back(pid_t(std::stoi(name)));
  }
  return out;
}

struct CliResult {
  int exitCode = -1;
  std::string out, err;
  std::string lastLine() const {
    std::string s = out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
  }
};

class CliProcess {
 public:
  // `inChild` runs in the child just before the CLI starts (a resource limit, say); it must be fork-safe. `program`
  // is the CLI to run: the build's, or a link to it somewhere another user can reach.
  CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
             const std::function<void()>& inChild = {}, const std::string& program = PIPESQUEEZE_CLI) {
    static int counter = 0;
    const auto dir = std::filesystem::temp_directory_path();
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(counter++);
    outPath_ = (dir / ("pipesqueeze-cli-" + tag + ".out")).string();
    errPath_ = (dir / ("pipesqueeze-cli-" + tag + ".err")).string();
    pid_ = fork();
    if (pid_ == 0) {
      freopen(outPath_.c_str(), "w", stdout);
      freopen(errPath_.c_str(), "w", stderr);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      if (inChild) inChild();
      std::vector<char*> argv{const_cast<char*>(program.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(program.c_str(), argv.data());
      _exit(127);
    }
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  CliResult wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    CliResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(outPath_);
    r.err = slurp(errPath_);
    std::filesystem::remove(outPath_);
    std::filesystem::remove(errPath_);
    return r;
  }

 private:
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  pid_t pid_ = -1;
  std::string outPath_, errPath_;
};

inline CliResult runCli(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                        const std::function<void()>& inChild = {}, const std::string& program = PIPESQUEEZE_CLI) {
  return CliProcess(args, env, inChild, program).wait();
}

// Waits until the run in `store` has recorded at least `steps` steps.
inline void waitForSteps(const std::string& store, size_t steps) {
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!std::filesystem::exists(store)) continue;
    try {
      RunStore s(store);
      auto runs = s.listRuns();
      if (!runs.empty() && s.metrics(runs.front().id, "train/loss").size() >= steps) return;
    } catch (const std::exception&) {
    }
  }
  FAIL() << "the run never reached " << steps << " steps";
}

}  // namespace ps::test
