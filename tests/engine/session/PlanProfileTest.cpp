// The planner's measurements (engine/session/PlanProfile.h): a preset's own step and link tensors, and candidate
// settings measured on them, which replayed in the dense step predict what a compressed run's step takes.
#include "engine/session/PlanProfile.h"

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

// The smoke preset with `changes` merged into its JSON (what a Config is built from).
Config smokeWith(const nlohmann::json& changes) {
  auto j = readJsonFile(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json");
  j.merge_patch(changes);
  return Config::fromJson(j);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// The cost model against runs. Six settings of the planner's grid (TopK with error feedback on gradients, as the
// planner offers it, and quantization) on 2 and 4 stages, at 10 and 100 Mbit/s: each setting's step time predicted
// from the dense profile and the setting's message costs (measureSetting()), against other runs of the setting.
// The model is 512 wide so that its 16 KiB messages, not its microseconds of compute, make most of a step. Each side
// is the median of five runs, each run's step the median of nine (medianStep()), and the runs alternate between dense
// and compressed (a dense profile beside each setting's runs), as single steps of compute measured on a busy machine
// wander by a fifth. The emulated clock never
// waits, so a run's step at 10 Mbit/s is its trace replayed at 10 (the re-timing tests hold that to the recorded time).
TEST(PlanProfile, TheCostModelPredictsACompressedRunsStepFromTheDenseProfile) {
#ifdef PIPESQUEEZE_SANITIZED
  GTEST_SKIP() << "a sanitized build computes several times slower, so compute, not the links, sets its steps; the "
                  "plain build checks the prediction";
#endif
  struct Setting {
    std::string name;
    CompressionOptions forward, backward;
  };
  std::vector<Setting> settings;
  for (int bits : {2, 4, 8})
    settings.push_back({"quantize bits=" + std::to_string(bits), method("quantize", {{"bits", bits}}),
                        method("quantize", {{"bits", bits}})});
  for (double k : {0.01, 0.1, 0.3})
    settings.push_back({"topk k=" + nlohmann::json(k).dump() + " (backward feedback=ef)", method("topk", {{"k", k}}),
                        method("topk", {{"k", k}, {"feedback", "ef"}})});
  const std::vector<double> bandwidths{10.0, 100.0};
  std::vector<double> errors;  // |predicted / measured - 1| of every point
  // Ten steps a run: on a machine busy now and then a run of six (its median of five) wandered by 15% at 2 stages.
  constexpr int kRuns = 5, kSteps = 10;
  for (int stages : {2, 4}) {
    const nlohmann::json shape = {{"model", {{"width", 512}, {"depth", 4}}}, {"pipeline", {{"stages", stages}}}};
    const Config dense = smokeWith(shape);
    // [setting][bandwidth][run]
    std::vector<std::vector<std::vector<double>>> predicted(settings.size(), std::vector<std::vector<double>>(2));
    auto measured = predicted;
    const auto compressed = [&](const Setting& setting) {
      nlohmann::json changes = shape;
      changes["compression"] = {{"forward", setting.forward.toJson()}, {"backward", setting.backward.toJson()}};
      return smokeWith(changes);
    };
    // A process's first runs of a shape are not its later ones (its allocator, caches and thread pool settle): one
    // of each, left out.
    (void)profileLinks(dense, kSteps, 1);
    (void)profileLinks(compressed(settings.front()), kSteps, 1);
    for (int run = 0; run < kRuns; ++run) {
      for (size_t s = 0; s < settings.size(); ++s) {
        // The dense profile beside the run it predicts: a machine whose speed drifts over the test (a shared VM's
        // cores) would otherwise bias every prediction of a run by how far its speed moved since one profile. The
        // run predicted sits between the two runs the prediction is made of, and they swap places every other
        // time, so a drift within the three bears on both sides alike.
        const bool denseFirst = run % 2 == 0;
        std::optional<LinkProfile> p;
        std::map<LinkDirection, MessageCost> costs;
        if (denseFirst)
          p = profileLinks(dense, kSteps, 4);
        else
          costs = measureSetting(dense, settings[s].forward, settings[s].backward, kSteps);
        const StepTrace trained = profileLinks(compressed(settings[s]), kSteps, 1).step;
        if (denseFirst)
          costs = measureSetting(dense, settings[s].forward, settings[s].backward, kSteps);
        else
          p = profileLinks(dense, kSteps, 4);
        const StepTrace planned = withMessageCosts(p->step, costs);
        for (size_t b = 0; b < bandwidths.size(); ++b) {
          LinkModel link = dense.link;
          link.bandwidth_mbps = bandwidths[b];
          predicted[s][b].push_back(replay(planned, link));
          measured[s][b].push_back(replay(trained, link));
        }
      }
    }
    for (size_t s = 0; s < settings.size(); ++s)
      for (size_t b = 0; b < bandwidths.size(); ++b) {
        const double want = median(measured[s][b]), got = median(predicted[s][b]);
        const char* name = settings[s].name.c_str();
        errors.push_back(std::abs(got / want - 1));
        EXPECT_NEAR(got, want, 0.25 * want) << name << ", " << stages << " stages at " << bandwidths[b] << " Mbit/s";
        std::printf("%d stages, %5g Mbit/s, %-36s predicted %7.3f ms, measured %7.3f ms (%+.1f%%)\n", stages,
                    bandwidths[b], name, 1000 * got, 1000 * want, 100 * (got / want - 1));
      }
  }
  // Typically within 10%. On a quiet machine all 24 points fall within 6.4%, most within 2%; a machine busy now and
  // then slows the compute of a 2-stage step, which the compressed runs' codecs leave no core for, by up to 17.5%
  // (clean CI runs). The median point stays near 2% either way: a model off by a tenth moves it past 5%.
  EXPECT_LT(median(errors), 0.05) << "the cost model's typical error";
}

}  // namespace
}  // namespace ps
