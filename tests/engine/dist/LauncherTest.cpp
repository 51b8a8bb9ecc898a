// The launcher's bookkeeping of the ranks it starts, with a stand-in executable for the CLI.
#include "engine/dist/Launcher.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ps {
namespace {

TEST(Launcher, NeverSignalsARankThatWasReapedElsewhere) {
  // Once another part of the process has reaped a child, its number is free for the system to give to any new
  // process: finish() must say so instead of killing whatever holds that number now.
  ::setenv("PIPESQUEEZE_CLI", "/bin/true", 1);
  Launcher launcher(nlohmann::json::object(), 2, 29999, "token");
  ::unsetenv("PIPESQUEEZE_CLI");
  int status = 0;
  const pid_t reaped = ::waitpid(-1, &status, 0);  // the one child, /bin/true, reaped behind the launcher's back
  ASSERT_GT(reaped, 0);
  const auto problems = launcher.finish(1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("reaped by another part"), std::string::npos) << problems[0];
}

TEST(Launcher, ARankSeesEachOfItsVariablesOnceWithTheLaunchersValue) {
  // A launcher started from a rank's environment (a nested launch, a shell that kept the variables) must not pass
  // the stale values on: a child reading the first PIPESQUEEZE_LAUNCHER_PID would watch the wrong parent, and the
  // first PIPESQUEEZE_STORE_TOKEN would be refused by the store.
  const auto dir = std::filesystem::temp_directory_path() / ("ps-launcher-env-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto script = dir / "rank.sh";
  const auto dump = dir / "env.txt";
  {
    std::ofstream out(script);
    // The environment block as execve received it (a shell's own `env` would print its deduplicated copy).
    out << "#!/bin/sh\ncat /proc/$$/environ > '" << dump.string() << "'\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ::setenv("PIPESQUEEZE_CLI", script.c_str(), 1);
  ::setenv(Launcher::kLauncherPidVariable, "1", 1);
  ::setenv("PIPESQUEEZE_STORE_TOKEN", "stale", 1);
  ::setenv("MASTER_PORT", "1", 1);
  std::vector<std::string> problems;
  {
    Launcher launcher(nlohmann::json::object(), 2, 29999, "fresh");
    problems = launcher.finish(10);
  }
  for (const char* v : {"PIPESQUEEZE_CLI", Launcher::kLauncherPidVariable, "PIPESQUEEZE_STORE_TOKEN", "MASTER_PORT"})
    ::unsetenv(v);
  EXPECT_TRUE(problems.empty()) << problems.front();
  std::ifstream in(dump);
  std::map<std::string, std::vector<std::string>> seen;
  for (std::string line; std::getline(in, line, '\0');) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) seen[line.substr(0, eq)].push_back(line.substr(eq + 1));
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(seen[Launcher::kLauncherPidVariable], std::vector<std::string>{std::to_string(::getpid())});
  EXPECT_EQ(seen["PIPESQUEEZE_STORE_TOKEN"], std::vector<std::string>{"fresh"});
  EXPECT_EQ(seen["MASTER_PORT"], std::vector<std::string>{"29999"});
  EXPECT_EQ(seen["RANK"], std::vector<std::string>{"1"});
}

}  // namespace
}  // namespace ps
