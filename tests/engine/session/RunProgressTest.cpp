// The run's totals and its summary, as the session keeps them step by step.
#include "engine/session/RunProgress.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

StepRecord stepWith(int64_t step, double loss, std::vector<LinkTraffic> links, double emulated) {
  StepRecord rec;
  rec.step = step;
  rec.loss = loss;
  rec.emulated_step_s = emulated;
  rec.links = std::move(links);
  return rec;
}

LinkTraffic traffic(uint64_t raw, uint64_t wire, double encode, double decode, double modelled) {
  LinkTraffic l;
  l.raw_bytes = raw;
  l.wire_bytes = wire;
  l.encode_s = encode;
  l.decode_s = decode;
  l.modelled_s = modelled;
  return l;
}

TEST(RunProgress, AStepAddsItsTrafficAndCompletesItsRecord) {
  RunProgress p;
  StepRecord first = stepWith(1, 2.0, {traffic(400, 100, 0.01, 0.02, 0.5), traffic(400, 50, 0.03, 0, 0.25)}, 1.5);
  p.add(first);
  EXPECT_EQ(p.step, 1);
  EXPECT_EQ(p.raw, 800u);
  EXPECT_EQ(p.wire, 150u);
  EXPECT_DOUBLE_EQ(first.codec_s, 0.06);
  EXPECT_DOUBLE_EQ(first.link_s, 0.75);
  EXPECT_DOUBLE_EQ(first.emulated_s, 1.5);
  StepRecord second = stepWith(2, 1.0, {traffic(400, 100, 0, 0, 0)}, 0.5);
  p.add(second);
  EXPECT_DOUBLE_EQ(second.emulated_s, 2.0);  // the run's emulated time so far
  EXPECT_EQ(p.wire, 250u);
}

TEST(RunProgress, TheSummaryTrainLossIsTheMeanOfTheLastSteps) {
  RunProgress p;
  for (int64_t s = 1; s <= int64_t(RunProgress::kRecentLosses) + 10; ++s) {
    StepRecord rec = stepWith(s, s <= 10 ? 100.0 : 1.0, {}, 0);  // the first ten fall out of the window
    p.add(rec);
  }
  const RunSummary s = p.summary(7, true, true, 3.0);
  EXPECT_EQ(s.run_id, 7);
  ASSERT_TRUE(s.train_loss);
  EXPECT_DOUBLE_EQ(*s.train_loss, 1.0);
  EXPECT_EQ(*s.steps, int64_t(RunProgress::kRecentLosses) + 10);
  EXPECT_DOUBLE_EQ(*s.wall_seconds, 3.0);
}

TEST(RunProgress, TheHeadlineIsTheEvaluationInferenceUses) {
  RunProgress p;
  EvalRecord compressed, plain;
  compressed.loss = 0.5, compressed.accuracy = 0.8;
  plain.loss = 0.4, plain.accuracy = 0.85;
  p.evalCompressed = compressed;
  p.evalPlain = plain;
  p.status = "finished";
  const RunSummary withCompression = p.summary(1, true, true, 0);
  EXPECT_EQ(withCompression.status, "finished");
  EXPECT_DOUBLE_EQ(*withCompression.eval.accuracy, 0.8);
  EXPECT_DOUBLE_EQ(*withCompression.uncompressed.accuracy, 0.85);
  const RunSummary plainHeadline = p.summary(1, true, false, 0);
  EXPECT_DOUBLE_EQ(*plainHeadline.eval.loss, 0.4);
  EXPECT_DOUBLE_EQ(*plainHeadline.compressed.loss, 0.5);  // both are always reported
  EXPECT_FALSE(RunProgress().summary(1, true, true, 0).train_loss);  // no step, no training loss
}

}  // namespace
}  // namespace ps
