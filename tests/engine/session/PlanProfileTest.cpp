// The planner's measurements (engine/session/PlanProfile.h): a preset's own step and link tensors, and candidate
// settings measured on them, which replayed in the dense step predict what a compressed run's step takes.
#include "engine/session/PlanProfile.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <stdexcept>

namespace ps {
namespace {

Config smoke() {
  return loadPreset(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json");
}

CompressionOptions method(const std::string& name, nlohmann::json options = nlohmann::json::object()) {
  options["method"] = name;
  return CompressionOptions::fromJson(options);
}

TEST(PlanProfile, AProfileKeepsTheLastStepAndEachDirectionsFirstMessages) {
  Config c = smoke();
  c.compression.forward = method("topk");
  c.compression.boundary_forward.assign(1, method("topk"));
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
  const auto none = measureCandidate(method("none"), {0, true}, activations);
  EXPECT_GE(none.cost.bytes, 8.0 * 32 * 4);
  EXPECT_EQ(none.relative_error, 0.0);
  const auto topk = measureCandidate(method("topk", {{"k", 0.1}}), {0, true}, activations);
  EXPECT_LT(topk.cost.bytes, 0.3 * none.cost.bytes);
  EXPECT_GT(topk.relative_error, 0.0);
  EXPECT_LT(topk.relative_error, 1.0);
  EXPECT_GT(topk.cost.encode_s, 0.0);
  EXPECT_GT(topk.cost.decode_s, 0.0);
  const auto q8 = measureCandidate(method("quantize", {{"bits", 8}}), {0, true}, activations);
  EXPECT_LT(q8.cost.bytes, 0.3 * none.cost.bytes);
  EXPECT_LT(q8.relative_error, topk.relative_error) << "8-bit values against a tenth of them";
  nlohmann::json ef = {{"k", 0.1}, {"feedback", "ef"}};
  const auto withEf = measureCandidate(method("topk", ef), {0, false}, p.tensors.at({0, false}));
  EXPECT_GT(withEf.relative_error, 0.0);
  EXPECT_THROW(measureCandidate(method("topk"), {0, true}, activations, 1), std::invalid_argument);
  EXPECT_THROW(measureCandidate(method("topk"), {0, true}, {}), std::invalid_argument);
  nlohmann::json aq = {{"feedback", "aqsgd"}};
  EXPECT_THROW(measureCandidate(method("quantize", aq), {0, true}, activations), std::invalid_argument);
}

// The smoke preset with `changes` merged into its JSON (what a Config is built from).
Config smokeWith(const nlohmann::json& changes) {
  auto j = readJsonFile(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json");
  j.merge_patch(changes);
  return Config::fromJson(j);
}

double median5(const std::function<double()>& f) {
  std::array<double, 5> v{f(), f(), f(), f(), f()};
  std::sort(v.begin(), v.end());
  return v[2];
}

// The cost model against runs: each setting's step time predicted from the dense profile and the setting's measured
// costs, against the same steps trained with the setting (their recorded emulated time), at 10 and 100 Mbit/s. The
// model is 512 wide so that its 16 KiB messages, not its microseconds of compute, make most of a step; each side is
// the median of five profiles, as single steps of compute measured on a busy machine wander by a fifth.
TEST(PlanProfile, TheCostModelPredictsACompressedRunsStepFromTheDenseProfile) {
#ifdef PIPESQUEEZE_SANITIZED
  GTEST_SKIP() << "a sanitized build computes several times slower, so compute, not the links, sets its steps; the "
                  "plain build checks the prediction";
#endif
  for (double mbps : {10.0, 100.0})
    for (const auto& options : {method("topk", {{"k", 0.1}}), method("quantize", {{"bits", 4}})}) {
      const Config dense = smokeWith({{"model", {{"width", 512}}}, {"link", {{"bandwidth_mbps", mbps}}}});
      const double predicted = median5([&] {
        const LinkProfile p = profileLinks(dense, 4, 4);
        std::map<LinkDirection, MessageCost> costs;
        for (const auto& [direction, tensors] : p.tensors)
          costs[direction] = measureCandidate(options, direction, tensors).cost;
        return replay(withMessageCosts(p.step, costs), dense.link);
      });
      const Config compressed =
          smokeWith({{"model", {{"width", 512}}},
                     {"link", {{"bandwidth_mbps", mbps}}},
                     {"compression", {{"forward", options.toJson()}, {"backward", options.toJson()}}}});
      const double measured = median5([&] { return replay(profileLinks(compressed, 4, 1).step); });
      EXPECT_NEAR(predicted, measured, 0.1 * measured) << options.method << " at " << mbps << " Mbit/s";
      std::printf("%s at %g Mbit/s: predicted %.3f ms, measured %.3f ms\n", options.method.c_str(), mbps,
                  1000 * predicted, 1000 * measured);
    }
}

}  // namespace
}  // namespace ps
