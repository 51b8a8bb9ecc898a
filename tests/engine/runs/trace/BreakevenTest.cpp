// The break-even map: saved runs re-timed over a range of bandwidths, their times to a target, the winner at each
// bandwidth and where a compressed run stops beating an uncompressed one, on runs whose step times are known exactly.
#include "engine/runs/trace/Breakeven.h"

#include "engine/core/Metrics.h"
#include "engine/core/StepTrace.h"
#include "engine/runs/trace/Retime.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ps {
namespace {

// Two stages: stage 0 computes `compute` seconds and sends `bytes` after `encode` seconds; stage 1 receives and is
// done. At B Mbit/s on an ideal link without latency a step takes compute + encode + bytes * 8 / (B * 1e6).
// Evaluations after every 2 steps climb 0.01 a time, reaching 0.9 at `reachAt` (a multiple of 2).
int64_t addRun(RunStore& store, const std::string& name, const nlohmann::json& compression, double compute,
               double encode, uint64_t bytes, int64_t reachAt, int64_t steps, const std::string& task = "synthetic") {
  const int64_t id = store.createRun(name, nlohmann::json{{"task", task}, {"compression", compression}}.dump(), "v");
  std::vector<TraceRow> rows;
  std::vector<MetricPoint> evals;
  const std::string key = task == "brown_lm" ? metric::kEvalPerplexity : metric::kEvalAccuracy;
  for (int64_t step = 1; step <= steps; ++step) {
    StepTrace t;
    t.model.bandwidth_mbps = 100;
    t.model.latency_ms = 0;
    t.model.tcp = false;
    t.lanes = {{0, 0, {{TraceEvent::Compute, compute}, {TraceEvent::SendForward, encode, 0, bytes}}},
               {1, 0, {{TraceEvent::ReceiveForward, 0}}}};
    rows.push_back({step, 0, encodeTrace(t)});
    if (step % 2 == 0) evals.push_back({step, key, 0.9 - 0.01 * double(reachAt - step) / 2, 0, 0});
  }
  store.append(id, evals, {}, {}, rows);
  return id;
}

const nlohmann::json kDense = {{"forward", {{"method", "none"}}}, {"backward", {{"method", "none"}}}};
const nlohmann::json kTopK = {{"forward", {{"method", "topk"}, {"k", 0.1}}}, {"backward", {{"method", "none"}}}};

// float32: 0.1 s compute and 10 Mbit a step, 0.9 after 10 steps: 10 * (0.1 + 10 / B) seconds.
// TopK: 0.1 s compute, 20 ms to encode, 1 Mbit a step, 0.9 after 12 steps: 12 * (0.12 + 1 / B).
// Equal where 1 + 100 / B = 1.44 + 12 / B: at B = 200 Mbit/s; TopK wins below it.
TEST(Breakeven, TheCrossingIsFoundExactlyAndEachWinnerAgreesWithRetimingByHand) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t dense = addRun(store, "dense", kDense, 0.1, 0, 1250000, 10, 16);
  const int64_t topk = addRun(store, "topk", kTopK, 0.1, 0.02, 125000, 12, 16);
  const int64_t never = addRun(store, "never", kTopK, 0.1, 0.02, 12500, 30, 16);  // stops at 0.83
  BreakevenOptions o;
  o.target = 0.9;
  o.network.latency_ms = 0;
  const BreakevenMap map = breakevenMap(store, {dense, topk, never}, o);
  ASSERT_EQ(map.runs.size(), 3u);
  EXPECT_TRUE(map.runs[0].dense);
  EXPECT_FALSE(map.runs[1].dense);
  EXPECT_EQ(map.metric, metric::kEvalAccuracy);
  ASSERT_EQ(map.bandwidths, (std::vector<double>{1, 3, 10, 30, 100, 300, 1000, 3000, 10000}));
  for (size_t b = 0; b < map.bandwidths.size(); ++b) {
    const double B = map.bandwidths[b];
    ASSERT_TRUE(map.runs[0].seconds[b] && map.runs[1].seconds[b]);
    EXPECT_NEAR(*map.runs[0].seconds[b], 10 * (0.1 + 10 / B), 1e-6) << B;
    EXPECT_NEAR(*map.runs[1].seconds[b], 12 * (0.12 + 1 / B), 1e-6) << B;
    EXPECT_FALSE(map.runs[2].seconds[b]) << "a run that never reaches the target is marked at " << B;
    // Re-timing each run by hand gives the same times and so the same winner.
    RetimeNetwork n;
    n.bandwidth_mbps = B;
    n.latency_ms = 0;
    const auto byHand = [&](int64_t id) { return timeToTarget(store, id, metric::kEvalAccuracy, 0.9, true, n); };
    EXPECT_NEAR(*byHand(dense).seconds, *map.runs[0].seconds[b], 1e-9);
    EXPECT_NEAR(*byHand(topk).seconds, *map.runs[1].seconds[b], 1e-9);
    EXPECT_EQ(map.winner[b], *byHand(topk).seconds < *byHand(dense).seconds ? 1 : 0) << B;
  }
  EXPECT_EQ(map.runs[2].why, "not reached");
  ASSERT_EQ(map.pairs.size(), 2u);
  const BreakevenPair& p = map.pairs[0];
  EXPECT_EQ(p.method, topk);
  EXPECT_EQ(p.dense, dense);
  ASSERT_EQ(p.crossings.size(), 1u);
  EXPECT_NEAR(p.crossings[0], 200, 200 * 1e-3);
  ASSERT_TRUE(p.wins_below);
  EXPECT_EQ(p.summary.rfind("run 2 beats run 1 below 20", 0), 0u) << p.summary;
  EXPECT_TRUE(map.pairs[1].nowhere) << map.pairs[1].summary;
  BreakevenOptions fast = o;  // a grid that ends below the crossing, and one that starts above it
  fast.bandwidths = {1, 10, 100};
  EXPECT_EQ(breakevenMap(store, {dense, topk}, fast).pairs[0].summary,
            "run 2 beats run 1 at every bandwidth mapped (up to 100 Mbit/s)");
  fast.bandwidths = {1000, 10000};
  EXPECT_EQ(breakevenMap(store, {dense, topk}, fast).pairs[0].summary,
            "run 2 beats run 1 at no bandwidth mapped (from 1000 Mbit/s)");
  fast.bandwidths = {10000, 30000};  // written out, not as 1e+04
  EXPECT_EQ(breakevenMap(store, {dense, topk}, fast).pairs[0].summary,
            "run 2 beats run 1 at no bandwidth mapped (from 10000 Mbit/s)");
}

TEST(Breakeven, TheTargetIsAShareOfTheUncompressedRunsFinalValue) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t topk = addRun(store, "topk", kTopK, 0.1, 0.02, 125000, 12, 16);   // ends at 0.92
  const int64_t dense = addRun(store, "dense", kDense, 0.1, 0, 1250000, 10, 16);  // ends at 0.93
  BreakevenOptions o;
  o.fraction = 0.9;
  const BreakevenMap map = breakevenMap(store, {topk, dense}, o);
  EXPECT_NEAR(map.target, 0.9 * 0.93, 1e-9);
  EXPECT_NE(map.target_from.find("90% of the uncompressed run 2's final eval/accuracy 0.93"), std::string::npos)
      << map.target_from;
  // Without an uncompressed run: the best final value, and no pairs.
  const BreakevenMap alone = breakevenMap(store, {topk}, o);
  EXPECT_NE(alone.target_from.find("best run 1"), std::string::npos) << alone.target_from;
  EXPECT_TRUE(alone.pairs.empty());
}

TEST(Breakeven, LanguageModelsWaitForAPerplexityAtOrBelowTheTarget) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  // The same curve read as perplexity: 0.86 at step 2, already at or below the target.
  const int64_t lm = addRun(store, "lm", kDense, 0.1, 0, 1250000, 10, 16, "brown_lm");
  BreakevenOptions o;
  o.target = 0.87;
  const BreakevenMap map = breakevenMap(store, {lm}, o);
  EXPECT_EQ(map.metric, metric::kEvalPerplexity);
  EXPECT_FALSE(map.higher_is_better);
  ASSERT_TRUE(map.runs[0].seconds[0]);
  EXPECT_NEAR(*map.runs[0].seconds[0], 2 * (0.1 + 10.0), 1e-6) << "the first evaluation is already there";
}

TEST(Breakeven, BadRequestsNameWhatIsWrong) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t a = addRun(store, "a", kDense, 0.1, 0, 1250000, 10, 4);
  const int64_t lm = addRun(store, "lm", kDense, 0.1, 0, 1250000, 10, 4, "brown_lm");
  const int64_t bare = store.createRun("bare", "{}", "v");
  const auto error = [&](std::vector<int64_t> ids, BreakevenOptions o) -> std::string {
    try {
      breakevenMap(store, ids, o);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error({a, lm}, {}).find("do not share a target"), std::string::npos);
  EXPECT_NE(error({a, bare}, {}).find("has no step traces, so it cannot be re-timed"), std::string::npos);
  EXPECT_NE(error({a, 99}, {}).find("no run 99"), std::string::npos);
  BreakevenOptions zero;
  zero.bandwidths = {10, 0};
  EXPECT_NE(error({a}, zero).find("the bandwidth must be a positive number"), std::string::npos);
  BreakevenOptions percent;
  percent.target = 85;
  EXPECT_NE(error({a}, percent).find("give a fraction, 0.85 for 85%"), std::string::npos);
  EXPECT_FALSE(compressesNothing(R"({"compression":{"boundaries":{"1":{"backward":{"method":"quantize"}}}}})"));
  EXPECT_TRUE(compressesNothing(R"({"compression":{"forward":{"method":"none","feedback":"ef"}}})"));
}

}  // namespace
}  // namespace ps
