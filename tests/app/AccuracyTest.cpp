#include "tests/app/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ps::test {
namespace {

nlohmann::json train(const std::string& preset) {
  const auto store = (std::filesystem::temp_directory_path() / ("pipesqueeze-accuracy-" + preset + ".sqlite")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(store + suffix);
  auto r = runCli({"train", "--preset", preset, "--store", store, "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.exitCode == 0 ? nlohmann::json::parse(r.lastLine()) : nlohmann::json::object();
}

// The uncompressed reference the compressed runs are held against (measured: 92.1%).
constexpr double kUncompressedAccuracy = 0.921;

TEST(Accuracy, FashionMnistFourStagesReachesNinetyPercentInThreeEpochs) {
  auto summary = train("fashion-mnist-4stage");
  ASSERT_TRUE(summary.contains("eval_accuracy"));
  EXPECT_LE(summary["steps"].get<int>(), 3 * 60000 / 64);
  EXPECT_EQ(summary["status"], "finished");
  const double accuracy = summary["eval_accuracy"];
  std::printf("Fashion-MNIST 4 stages: test accuracy %.2f%% after %d steps, %.0f s\n", 100 * accuracy,
              summary["steps"].get<int>(), summary["wall_seconds"].get<double>());
  RecordProperty("accuracy", std::to_string(accuracy));
  EXPECT_GE(accuracy, 0.90);
}

TEST(Accuracy, TopKTenPercentBothWaysStaysWithinThreePointsWithCompressionAtInference) {
  auto summary = train("fashion-mnist-topk10");
  ASSERT_TRUE(summary.contains("eval_accuracy"));
  const double compressed = summary["eval_accuracy"], plain = summary["eval_accuracy_uncompressed"];
  std::printf("Fashion-MNIST TopK 10%% both ways: %.2f%% with compression at inference, %.2f%% without; "
              "%.1f x fewer bytes\n", 100 * compressed, 100 * plain,
              summary["bytes_raw"].get<double>() / summary["bytes_wire"].get<double>());
  EXPECT_GE(compressed, kUncompressedAccuracy - 0.03);
  EXPECT_GT(summary["bytes_raw"].get<double>() / summary["bytes_wire"].get<double>(), 7.5);
}

}  // namespace
}  // namespace ps::test
