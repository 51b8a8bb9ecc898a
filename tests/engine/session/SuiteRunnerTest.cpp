#include "engine/session/SuiteRunner.h"
#include "engine/suites/SuiteResults.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <unistd.h>

namespace ps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path tempDir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("pipesqueeze-runner-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs a test in `dir` as its working folder (a suite's prepare step creates its file below the folder it runs in),
// and goes back after.
struct InFolder {
  explicit InFolder(const fs::path& dir) : before(fs::current_path()) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(before); }
  fs::path before;
};

// A suite on the smoke preset whose prepare step saves a checkpoint of `prepareSteps` steps to `creates` (a path
// relative to the working folder).
Suite suiteWithPrepare(const fs::path& creates, int prepareSteps) {
  const json j = {
      {"title", "t"},
      {"claim", "c"},
      {"citation", "x"},
      {"scale", "s"},
      {"base", "smoke"},
      {"set", {"train.max_steps=5", "eval.every_steps=0"}},
      {"variants", {{{"name", "a"}}, {{"name", "b"}, {"set", {"compression.forward.method=fp16"}}}}},
      {"rules", {{{"text", "t"}, {"paper", "p"}, {"metric", "eval_accuracy"}, {"lhs", "a"}, {"rhs", "b"}}}},
      {"prepare",
       {{{"preset", "smoke"},
         {"set", {"run.save_checkpoint=true", "train.max_steps=" + std::to_string(prepareSteps)}},
         {"creates", creates.string()}}}}};
  return Suite::fromJson(j, "prepared", "test");
}

TEST(SuiteRunner, APrepareStepCreatesItsFileOnlyWhenItsRunFinished) {
  const auto dir = tempDir("prepare");
  const InFolder here(dir);
  auto store = std::make_shared<RunStore>((dir / "runs.sqlite").string());
  const auto creates = dir / "ckpt.pt";
  SuiteRunner runner(store);
  std::vector<SuiteRunEvent::Kind> kinds;
  const auto out = runner.run(suiteWithPrepare("ckpt.pt", 3), 1, SuiteScale{},
                              [&](const SuiteRunEvent& e) { kinds.push_back(e.kind); });
  EXPECT_EQ(out.ran, 2);
  EXPECT_FALSE(out.cancelled);
  EXPECT_TRUE(fs::exists(creates));
  EXPECT_FALSE(fs::exists(creates.string() + ".partial"));
  ASSERT_GE(kinds.size(), 2u);
  EXPECT_EQ(kinds[0], SuiteRunEvent::Kind::Prepare);
  // Done stays done: the next run skips the prepare step and both variants.
  kinds.clear();
  EXPECT_EQ(runner
                .run(suiteWithPrepare("ckpt.pt", 3), 1, SuiteScale{},
                     [&](const SuiteRunEvent& e) { kinds.push_back(e.kind); })
                .skipped,
            2);
  EXPECT_EQ(kinds, std::vector<SuiteRunEvent::Kind>(2, SuiteRunEvent::Kind::Skip));
}

TEST(SuiteRunner, ACancelledPrepareStepLeavesNoFileBehindAndRunsNothingElse) {
  const auto dir = tempDir("cancel");
  const InFolder here(dir);
  auto store = std::make_shared<RunStore>((dir / "runs.sqlite").string());
  const auto creates = dir / "ckpt.pt";
  SuiteRunner runner(store);
  SuiteOutcome out;
  std::thread worker([&] { out = runner.run(suiteWithPrepare("ckpt.pt", 1000000), 1, SuiteScale{}, {}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  runner.cancel();
  worker.join();
  EXPECT_TRUE(out.cancelled);
  EXPECT_EQ(out.ran, 0);
  EXPECT_FALSE(fs::exists(creates)) << "a stopped prepare run must not leave what later suites take for the real file";
  EXPECT_FALSE(fs::exists(creates.string() + ".partial"));
  const auto runs = store->listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.front().status, "stopped");
}

}  // namespace
}  // namespace ps
