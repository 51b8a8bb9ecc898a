#include "tests/app/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ps::test {
namespace {

TEST(Accuracy, FashionMnistFourStagesReachesNinetyPercentInThreeEpochs) {
  const auto store = (std::filesystem::temp_directory_path() / "pipesqueeze-accuracy.sqlite").string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(store + suffix);
  auto r = runCli({"train", "--preset", "fashion-mnist-4stage", "--store", store, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto summary = nlohmann::json::parse(r.lastLine());
  EXPECT_LE(summary["steps"].get<int>(), 3 * 60000 / 64);
  EXPECT_EQ(summary["status"], "finished");
  const double accuracy = summary["eval_accuracy"];
  std::printf("Fashion-MNIST 4 stages: test accuracy %.2f%% after %d steps, %.0f s\n", 100 * accuracy,
              summary["steps"].get<int>(), summary["wall_seconds"].get<double>());
  RecordProperty("accuracy", std::to_string(accuracy));
  EXPECT_GE(accuracy, 0.90);
}

}  // namespace
}  // namespace ps::test
