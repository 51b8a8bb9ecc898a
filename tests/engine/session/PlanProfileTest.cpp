// The planner's measurements (engine/session/PlanProfile.h): a preset's own step and link tensors, and candidate
// settings measured on them, which replayed in the dense step predict what a compressed run's step takes.
#include "engine/session/PlanProfile.h"
#include "tests/engine/session/CostModelPoints.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {
namespace {

Config smoke() {
  return loadPreset(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json");
}

CompressionOptions method(const std::string& name, nlohmann::json options = nlohmann::json::object()) {
  options["method"] = name;
  return CompressionOptions::fromJson(options);
}

TEST(PlanProfile, AProfileKeepsItsMedianStepAndEachDirectionsFirstMessages) {
  Config c = smoke();
  c.compression.forward = method("topk");
  c.compression.boundary_forward.assign(1, method("topk"));
  c.train.threads = 2;
  const LinkProfile p = profileLinks(withoutCompression(c), 3, 2);
  ASSERT_EQ(p.tensors.size(), 2u);  // 2 stages: boundary 0, both ways
  for (const auto& [direction, tensors] : p.tensors) {
    ASSERT_EQ(tensors.size(), 2u) << linkDirectionName(direction);
    for (const auto& t : tensors) {
      EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{8, 32})) << "a micro-batch of 8 rows of width 32";
      EXPECT_EQ(t.scalar_type(), torch::kFloat);
      EXPECT_GT(t.abs().sum().item<double>(), 0.0);
    }
  }
  EXPECT_EQ(p.threads_per_stage, 1) << "2 threads for 2 stages";
  const auto costs = meanMessageCosts(p.step);
  EXPECT_EQ(costs.size(), 2u);
  EXPECT_GE(costs.at({0, true}).bytes, 8.0 * 32 * 4) << "sent as float32";
  EXPECT_GT(replay(p.step), 0.0);
  EXPECT_THROW(profileLinks(c, 0, 2), std::invalid_argument);
  EXPECT_THROW(profileLinks(c, 2, 0), std::invalid_argument);
}

TEST(PlanProfile, CandidatesAreMeasuredOnTheTensorsForBytesTimeAndError) {
  const LinkProfile p = profileLinks(withoutCompression(smoke()), 2, 4);
  const auto& activations = p.tensors.at({0, true});
  const auto none = measureCandidate(method("none"), {0, true}, activations, p.threads_per_stage);
  EXPECT_GE(none.cost.bytes, 8.0 * 32 * 4);
  EXPECT_EQ(none.relative_error, 0.0);
  const auto topk = measureCandidate(method("topk", {{"k", 0.1}}), {0, true}, activations, p.threads_per_stage);
  EXPECT_LT(topk.cost.bytes, 0.3 * none.cost.bytes);
  EXPECT_GT(topk.relative_error, 0.0);
  EXPECT_LT(topk.relative_error, 1.0);
  EXPECT_GT(topk.cost.encode_s, 0.0);
  EXPECT_GT(topk.cost.decode_s, 0.0);
  const auto q8 = measureCandidate(method("quantize", {{"bits", 8}}), {0, true}, activations, p.threads_per_stage);
  EXPECT_LT(q8.cost.bytes, 0.3 * none.cost.bytes);
  EXPECT_LT(q8.relative_error, topk.relative_error) << "8-bit values against a tenth of them";
  nlohmann::json ef = {{"k", 0.1}, {"feedback", "ef"}};
  const auto withEf = measureCandidate(method("topk", ef), {0, false}, p.tensors.at({0, false}), p.threads_per_stage);
  EXPECT_GT(withEf.relative_error, 0.0);
  // The same codecs in a run of the setting: the same bytes (they depend on the messages' shape alone), and times.
  const auto inRun = measureSetting(smoke(), method("topk", {{"k", 0.1}}), method("quantize", {{"bits", 8}}), 3);
  ASSERT_EQ(inRun.size(), 2u);
  EXPECT_EQ(inRun.at({0, true}).bytes, topk.cost.bytes);
  EXPECT_EQ(inRun.at({0, false}).bytes, q8.cost.bytes);
  for (const auto& [direction, cost] : inRun) {
    EXPECT_GT(cost.encode_s, 0.0) << linkDirectionName(direction);
    EXPECT_GT(cost.decode_s, 0.0) << linkDirectionName(direction);
  }
  // The codec computes on a stage worker's threads, and the caller keeps its own.
  at::set_num_threads(2);
  (void)measureCandidate(method("topk"), {0, true}, activations, 1);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_THROW(measureCandidate(method("topk"), {0, true}, activations, 1, 1), std::invalid_argument);
  EXPECT_THROW(measureCandidate(method("topk"), {0, true}, activations, 0), std::invalid_argument);
  EXPECT_THROW(measureCandidate(method("topk"), {0, true}, {}, 1), std::invalid_argument);
  nlohmann::json aq = {{"feedback", "aqsgd"}};
  EXPECT_THROW(measureCandidate(method("quantize", aq), {0, true}, activations, 1), std::invalid_argument);
}

// AQ-SGD is measured in a run that revisits its samples: from the third step every message sends each sample's change
// since its last visit, at 4 bits, so its messages are an eighth of float32's and what the receiver uses is close.
TEST(PlanProfile, AqsgdIsMeasuredInARunThatRevisitsItsSamples) {
  const LinkProfile dense = profileLinks(withoutCompression(smoke()), 2, 1);
  const double float32 = meanMessageCosts(dense.step).at({0, true}).bytes;
  const auto aq = measureAqsgd(smoke(), method("quantize", {{"bits", 4}, {"feedback", "aqsgd"}}), 6);
  ASSERT_EQ(aq.size(), 1u) << "activations only: boundary 0 forward";
  const CandidateMeasure& m = aq.at({0, true});
  EXPECT_LT(m.cost.bytes, 0.2 * float32) << "4-bit changes, not float32 activations";
  EXPECT_GT(m.cost.bytes, 0.1 * float32);
  EXPECT_GT(m.cost.encode_s, 0.0);
  EXPECT_GT(m.cost.decode_s, 0.0);
  EXPECT_GT(m.relative_error, 0.0);
  EXPECT_LT(m.relative_error, 0.2);
  EXPECT_EQ(dense.steps_per_epoch, 1024 / 32);
  EXPECT_THROW(measureAqsgd(smoke(), method("quantize", {{"bits", 4}}), 6), std::invalid_argument);
  EXPECT_THROW(measureAqsgd(smoke(), method("quantize", {{"feedback", "aqsgd"}}), 3), std::invalid_argument);
}

// The cost model against runs (CostModelPoints.h): every point within a quarter, the median point within 5%.
TEST(PlanProfile, TheCostModelPredictsACompressedRunsStepFromTheDenseProfile) {
#ifdef PIPESQUEEZE_SANITIZED
  GTEST_SKIP() << "a sanitized build computes several times slower, so compute, not the links, sets its steps; the "
                  "plain build checks the prediction";
#endif
  // Ten steps a run: on a machine busy now and then a run of six (its median of five) wandered by 15% at 2 stages.
  std::vector<double> errors;  // |predicted / measured - 1| of every point
  for (const auto& p : cost_model::points(5, 10)) {
    errors.push_back(std::abs(p.predicted_s / p.measured_s - 1));
    EXPECT_NEAR(p.predicted_s, p.measured_s, 0.25 * p.measured_s)
        << p.setting << ", " << p.stages << " stages at " << p.bandwidth_mbps << " Mbit/s";
    std::printf("%d stages, %5g Mbit/s, %-36s predicted %7.3f ms, measured %7.3f ms (%+.1f%%)\n", p.stages,
                p.bandwidth_mbps, p.setting.c_str(), 1000 * p.predicted_s, 1000 * p.measured_s,
                100 * (p.predicted_s / p.measured_s - 1));
  }
  // Typically within 10%. On a quiet machine all 24 points fall within 6.4%, most within 2%; a machine busy now and
  // then slows the compute of a 2-stage step, which the compressed runs' codecs leave no core for, by up to 17.5%
  // (clean CI runs). The median point stays near 2% either way: a model off by a tenth moves it past 5%.
  EXPECT_LT(cost_model::lowerMedian(errors), 0.05) << "the cost model's typical error";
}

}  // namespace
}  // namespace ps
