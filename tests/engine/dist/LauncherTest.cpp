// The launcher's bookkeeping of the ranks it starts, with a stand-in executable for the CLI.
#include "engine/dist/Launcher.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

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

}  // namespace
}  // namespace ps
