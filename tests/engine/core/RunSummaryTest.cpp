// A run's summary: written by the session, read by the filter, the runs table and the suites. Its JSON keeps the
// keys older runs hold, and a stored summary is read as untrusted.
#include "engine/core/RunSummary.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

RunSummary classifierRun() {
  RunSummary s;
  s.run_id = 7;
  s.status = "finished";
  s.steps = 2811;
  s.train_loss = 0.25;
  s.compressed = {0.31, 0.89, std::nullopt};
  s.uncompressed = {0.29, 0.90, std::nullopt};
  s.eval = s.compressed;
  s.bytes_raw = 4800000000ull;
  s.bytes_wire = 600000000ull;
  s.wall_seconds = 140.5;
  s.emulated_seconds = 120.25;
  return s;
}

TEST(RunSummary, TheJsonHoldsTheKeysEveryReaderUses) {
  const auto j = classifierRun().toJson();
  for (const char* key : {"run_id", "status", "steps", "train_loss", "eval_loss", "eval_accuracy",
                          "eval_loss_compressed", "eval_accuracy_compressed", "eval_loss_uncompressed",
                          "eval_accuracy_uncompressed", "bytes_raw", "bytes_wire", "wall_seconds", "emulated_seconds"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_FALSE(j.contains("eval_perplexity"));  // a classifier's summary names accuracies only
  EXPECT_FALSE(j.contains("reason"));           // written only when there is one
  EXPECT_TRUE(j["bytes_wire"].is_number_integer());
  EXPECT_EQ(j["bytes_wire"].get<uint64_t>(), 600000000ull);
}

TEST(RunSummary, ReadsBackWhatItWrote) {
  const RunSummary s = RunSummary::fromJson(classifierRun().toJson());
  EXPECT_EQ(s.run_id, 7);
  EXPECT_EQ(s.status, "finished");
  EXPECT_EQ(*s.steps, 2811);
  EXPECT_TRUE(s.classifier);
  EXPECT_DOUBLE_EQ(*s.eval.accuracy, 0.89);
  EXPECT_DOUBLE_EQ(*s.uncompressed.accuracy, 0.90);
  EXPECT_FALSE(s.eval.perplexity);
  EXPECT_EQ(*s.bytes_raw, 4800000000ull);
  EXPECT_DOUBLE_EQ(*s.compressionRatio(), 8.0);
  EXPECT_DOUBLE_EQ(*s.emulated_seconds, 120.25);
}

TEST(RunSummary, ALanguageModelsSummaryNamesPerplexities) {
  RunSummary lm;
  lm.classifier = false;
  lm.eval = {3.1, std::nullopt, 22.2};
  const auto j = lm.toJson();
  EXPECT_TRUE(j.contains("eval_perplexity"));
  EXPECT_FALSE(j.contains("eval_accuracy"));
  const RunSummary back = RunSummary::fromJson(j);
  EXPECT_FALSE(back.classifier);
  EXPECT_DOUBLE_EQ(*back.eval.perplexity, 22.2);
}

TEST(RunSummary, MissingOrMistypedFiguresReadAsMissing) {
  const auto s = RunSummary::fromJson({{"status", 3},
                                       {"steps", "many"},
                                       {"eval_accuracy", nullptr},
                                       {"bytes_wire", -5},
                                       {"bytes_raw", "10"},
                                       {"wall_seconds", true}});
  EXPECT_EQ(s.status, "");
  EXPECT_FALSE(s.steps);
  EXPECT_FALSE(s.eval.accuracy);
  EXPECT_FALSE(s.bytes_wire);
  EXPECT_FALSE(s.bytes_raw);
  EXPECT_FALSE(s.wall_seconds);
  EXPECT_FALSE(s.compressionRatio());
  EXPECT_FALSE(RunSummary::fromJson(nlohmann::json::array()).train_loss);
  RunSummary none;
  none.bytes_raw = 10, none.bytes_wire = 0;
  EXPECT_FALSE(none.compressionRatio());  // nothing crossed: no ratio
}

}  // namespace
}  // namespace ps
