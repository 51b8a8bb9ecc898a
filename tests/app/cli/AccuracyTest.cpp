#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ps::test {
namespace {

std::string freshStore(const std::string& preset) {
  const auto store = (std::filesystem::temp_directory_path() / ("pipesqueeze-accuracy-" + preset + ".sqlite")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(store + suffix);
  return store;
}

nlohmann::json summaryOf(const CliResult& r) {
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.exitCode == 0 ? nlohmann::json::parse(r.lastLine()) : nlohmann::json::object();
}

// The compressed run is held against an uncompressed run trained in the same test, on the same seed, not against a
// remembered figure: both presets train 3 epochs with seed 1. The two runs go side by side, one per core. Only the
// final evaluation is read, so the presets' evaluations during training (each 10,000 images, with and without
// compression: 6.5 CPU-seconds) are left out; they do not change the training.
TEST(Accuracy, DenseReachesNinetyPercentAndTopKTenPercentStaysWithinThreePointsOfIt) {
  CliProcess denseRun({"train", "--preset", "fashion-mnist-4stage", "--store", freshStore("dense"), "--json", "--set",
                       "eval.every_steps=0"});
  CliProcess topkRun({"train", "--preset", "fashion-mnist-topk10", "--store", freshStore("topk10"), "--json", "--set",
                      "eval.every_steps=0"});
  const auto dense = summaryOf(denseRun.wait()), topk = summaryOf(topkRun.wait());
  ASSERT_TRUE(dense.contains("eval_accuracy") && topk.contains("eval_accuracy"));
  ASSERT_EQ(dense["status"], "finished");
  ASSERT_EQ(topk["status"], "finished");

  const double reference = dense["eval_accuracy"];
  std::printf("Fashion-MNIST 4 stages: test accuracy %.2f%% after %d steps, %.0f s\n", 100 * reference,
              dense["steps"].get<int>(), dense["wall_seconds"].get<double>());
  RecordProperty("accuracy", std::to_string(reference));
  EXPECT_LE(dense["steps"].get<int>(), 3 * 60000 / 64);
  EXPECT_GE(reference, 0.90);

  const double compressed = topk["eval_accuracy"], plain = topk["eval_accuracy_uncompressed"];
  std::printf("Fashion-MNIST TopK 10%% both ways: %.2f%% with compression at inference, %.2f%% without, against "
              "%.2f%% uncompressed; %.1f x fewer bytes\n", 100 * compressed, 100 * plain, 100 * reference,
              topk["bytes_raw"].get<double>() / topk["bytes_wire"].get<double>());
  EXPECT_EQ(topk["steps"], dense["steps"]);
  EXPECT_GE(compressed, reference - 0.03);
  EXPECT_GT(topk["bytes_raw"].get<double>() / topk["bytes_wire"].get<double>(), 7.5);
}

}  // namespace
}  // namespace ps::test
