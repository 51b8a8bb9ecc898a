// The planner's accuracy model (engine/plan/Evidence.h): what finished runs say about a setting, and what they do not.
#include <gtest/gtest.h>

#include "engine/core/Metrics.h"
#include "engine/plan/Evidence.h"
#include "engine/runs/config/Config.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

namespace ps::plan {
namespace {

using nlohmann::json;

json fashion() {
  return json{{"task", "fashion_mnist"},
              {"train", {{"epochs", 3}, {"batch_size", 64}, {"seed", 1}}},
              {"pipeline", {{"stages", 4}, {"microbatches", 4}}}};
}

// `config` with one key (a dot path) set, as a preset would write it.
json with(json config, const std::string& key, const json& value) {
  json* node = &config;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    node = &(*node)[key.substr(start, dot - start)];
  (*node)[key.substr(start)] = value;
  return config;
}

json full(const json& partial) {
  return Config::fromJson(partial).json;
}

// A finished run of `config` whose evaluations are `curve`, one every 100 steps.
int64_t addRun(RunStore& store, const json& config, const std::vector<double>& curve,
               const std::string& status = "finished") {
  const int64_t id = store.createRun("run", full(config).dump(), "test");
  std::vector<MetricPoint> points;
  for (size_t i = 0; i < curve.size(); ++i)
    points.push_back({int64_t(100 * (i + 1)), metric::kEvalAccuracy, curve[i], 0.0, 0.0});
  store.append(id, points, {}, {});
  store.finishRun(id, status, "", "");
  return id;
}

TEST(PlanEvidence, ASettingIsWhatDiffersFromDenseOnOneTrafficOnly) {
  const json dense = full(fashion());
  Traffic t = Traffic::Gradients;
  EXPECT_EQ(settingOf(dense, full(with(fashion(), "train.seed", 7)), &t), "") << "another seed is dense";
  EXPECT_EQ(settingOf(dense, full(with(fashion(), "link.bandwidth_mbps", 10)), &t), "") << "so is another network";
  auto topk = with(with(fashion(), "compression.forward.method", "topk"), "compression.forward.k", 0.25);
  EXPECT_EQ(settingOf(dense, full(topk), &t), "k=0.25, method=topk");
  EXPECT_EQ(t, Traffic::Activations);
  auto q4 = with(with(fashion(), "compression.backward.method", "quantize"), "compression.backward.bits", 4);
  EXPECT_EQ(settingOf(dense, full(q4), &t), "bits=4, method=quantize");
  EXPECT_EQ(t, Traffic::Gradients);
  EXPECT_FALSE(settingOf(dense, full(with(topk, "compression.backward.method", "quantize")), &t))
      << "both traffics at once is no evidence for either";
  EXPECT_FALSE(settingOf(dense, full(with(topk, "train.lr", 0.01)), &t)) << "nor is another learning rate";
  EXPECT_FALSE(settingOf(dense, full(with(fashion(), "model.width", 24)), &t)) << "nor another model";
}

TEST(PlanEvidence, SettingsAreMeasuredAgainstDenseTrainedTheSameWay) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const json topk = with(with(fashion(), "compression.forward.method", "topk"), "compression.forward.k", 0.25);
  const json q8 = with(with(fashion(), "compression.backward.method", "quantize"), "compression.backward.bits", 2);
  const int64_t dense1 = addRun(store, fashion(), {0.80, 0.88, 0.90});
  const int64_t dense2 = addRun(store, with(fashion(), "train.seed", 2), {0.82, 0.89, 0.92});
  const int64_t topk1 = addRun(store, topk, {0.70, 0.80, 0.86, 0.895});  // reaches 0.8918 at 400
  const int64_t topk2 = addRun(store, with(topk, "train.seed", 2), {0.72, 0.82, 0.895, 0.885});  // at 300
  const int64_t q81 = addRun(store, q8, {0.60, 0.65, 0.70});  // never reaches the target
  addRun(store, with(topk, "train.lr", 0.01), {0.99});        // trained otherwise: not evidence
  addRun(store, topk, {0.99}, "stopped");                     // unfinished: not evidence
  addRun(store, with(fashion(), "model.width", 24), {0.99});  // another model: not dense either

  const EvidenceSet e = gatherEvidence(store, full(fashion()));
  EXPECT_EQ(e.metric, metric::kEvalAccuracy);
  EXPECT_EQ(e.dense, (std::vector<int64_t>{dense1, dense2}));
  EXPECT_DOUBLE_EQ(e.dense_final, 0.91);
  EXPECT_DOUBLE_EQ(e.target, 0.98 * 0.91);  // 0.8918: dense reaches it at steps 300 and 300
  ASSERT_EQ(e.settings.size(), 2u);
  const Evidence* t = e.find(Traffic::Activations, "k=0.25, method=topk");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->runs, (std::vector<int64_t>{topk1, topk2}));
  EXPECT_DOUBLE_EQ(t->final_value, 0.89);
  EXPECT_NEAR(t->accuracy_cost, 2.0, 1e-9) << "points below dense's mean";
  ASSERT_TRUE(t->steps_factor.has_value()) << "both seeds reach 0.8918";
  EXPECT_DOUBLE_EQ(*t->steps_factor, (400.0 + 300.0) / 2 / 300.0);
  const Evidence* q = e.find(Traffic::Gradients, "bits=2, method=quantize");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->runs, (std::vector<int64_t>{q81}));
  EXPECT_NEAR(q->accuracy_cost, 21.0, 1e-9);
  EXPECT_FALSE(q->steps_factor.has_value()) << "a run that never reached the target has no steps factor";
  EXPECT_EQ(e.find(Traffic::Activations, "bits=2, method=quantize"), nullptr) << "evidence is per traffic";
  EXPECT_EQ(e.find(Traffic::Activations, "k=0.01, method=topk"), nullptr) << "no run, no evidence";
}

TEST(PlanEvidence, WithoutADenseRunNothingIsCredited) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  addRun(store, with(fashion(), "compression.forward.method", "topk"), {0.9});
  addRun(store, fashion(), {0.9}, "failed");
  const EvidenceSet e = gatherEvidence(store, full(fashion()));
  EXPECT_TRUE(e.dense.empty());
  EXPECT_TRUE(e.settings.empty()) << "a setting's cost is only measured against dense trained the same way";
}

}  // namespace
}  // namespace ps::plan
