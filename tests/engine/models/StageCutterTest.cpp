#include "engine/models/BlockModel.h"
#include "engine/models/StageCutter.h"
#include "engine/models/StageModule.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

namespace ps {
namespace {

double maxStage(const std::vector<double>& cost, const std::vector<size_t>& starts) {
  double worst = 0;
  for (size_t s = 0; s < starts.size(); ++s) {
    const size_t end = s + 1 < starts.size() ? starts[s + 1] : cost.size();
    double sum = 0;
    for (size_t b = starts[s]; b < end; ++b) sum += cost[b];
    worst = std::max(worst, sum);
  }
  return worst;
}

// Exhaustive search over every cut, for comparison.
double bruteForce(const std::vector<double>& cost, int stages, size_t from = 0) {
  if (stages == 1) {
    double sum = 0;
    for (size_t b = from; b < cost.size(); ++b) sum += cost[b];
    return sum;
  }
  double best = 1e300, head = 0;
  for (size_t end = from + 1; end + size_t(stages - 1) <= cost.size(); ++end) {
    head += cost[end - 1];
    best = std::min(best, std::max(head, bruteForce(cost, stages - 1, end)));
  }
  return best;
}

TEST(StageCutter, BalancedCutsAreOptimal) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> cost(2 + rng() % 9);
    for (auto& c : cost) c = 1 + rng() % 100;
    const int stages = 1 + int(rng() % std::min<size_t>(cost.size(), 8));
    auto starts = balanceCuts(cost, stages);
    ASSERT_EQ(starts.size(), size_t(stages));
    EXPECT_EQ(starts[0], 0u);
    for (size_t s = 1; s < starts.size(); ++s) EXPECT_GT(starts[s], starts[s - 1]);
    EXPECT_DOUBLE_EQ(maxStage(cost, starts), bruteForce(cost, stages));
  }
  EXPECT_EQ(balanceCuts({1, 1, 1, 1}, 2), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(balanceCuts({10, 1, 1, 1}, 2), (std::vector<size_t>{0, 1}));
}

TEST(StageCutter, RejectsMoreStagesThanBlocks) {
  try {
    balanceCuts({1, 2, 3}, 4);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("3 blocks"), std::string::npos);
  }
}

TEST(StageCutter, ExplicitCutsAreChecked) {
  EXPECT_EQ(explicitCuts({2, 5}, 8, 3), (std::vector<size_t>{0, 2, 5}));
  EXPECT_THROW(explicitCuts({2}, 8, 3), ConfigError);      // too few
  EXPECT_THROW(explicitCuts({5, 2}, 8, 3), ConfigError);   // decreasing
  EXPECT_THROW(explicitCuts({2, 8}, 8, 3), ConfigError);   // past the last block
  EXPECT_THROW(explicitCuts({0, 3}, 8, 3), ConfigError);   // an empty first stage
}

TEST(Models, BlocksCutAnywhereComposeToTheWholeModel) {
  for (const std::string task : {"fashion_mnist", "brown_lm", "synthetic"}) {
    // Depth 7 gives at least 8 blocks, the most stages a run may ask for.
    Config c = Config::fromJson({{"task", task}, {"model", {{"width", 8}, {"depth", 7}, {"heads", 2}}}});
    ModelShape shape;
    torch::Tensor x;
    if (task == "brown_lm") {
      shape.kind = TaskKind::LanguageModel, shape.outputs = 11, shape.context = 9;
      x = torch::randint(0, 11, {3, 9}, torch::kInt64);
    } else if (task == "synthetic") {
      shape.input_features = 16, shape.outputs = 4;
      x = torch::randn({3, 16});
    } else {
      x = torch::randn({3, 1, 28, 28});
    }
    BlockModel m = buildModel(c, shape, 9);
    EXPECT_GE(m.size(), 8u) << task << " must allow 8 stages";
    EXPECT_EQ(m.names.size(), m.size());
    torch::NoGradGuard g;
    auto whole = StageModule(m, 0, m.size()).forward(x);
    auto first = StageModule(m, 0, 3).forward(x);
    auto split = StageModule(m, 3, m.size()).forward(first);
    EXPECT_TRUE(torch::allclose(whole, split)) << task;
    EXPECT_EQ(whole.size(-1), shape.outputs);
    // Same seed, same parameters; another seed, others.
    BlockModel again = buildModel(c, shape, 9), other = buildModel(c, shape, 10);
    auto p0 = m.blocks[0].ptr()->parameters()[0];
    EXPECT_TRUE(torch::equal(p0, again.blocks[0].ptr()->parameters()[0]));
    EXPECT_FALSE(torch::equal(p0, other.blocks[0].ptr()->parameters()[0]));
  }
}

// The block count the configuration checks promise is the count buildModel makes, for every task and depth.
TEST(Models, BlockCountIsKnownBeforeBuilding) {
  for (const std::string task : {"fashion_mnist", "brown_lm", "synthetic"})
    for (int64_t depth : {1, 2, 4, 7}) {
      Config c = Config::fromJson({{"task", task}, {"model", {{"width", 8}, {"depth", depth}, {"heads", 2}}}});
      ModelShape shape;
      if (task == "brown_lm") shape.kind = TaskKind::LanguageModel, shape.outputs = 11, shape.context = 9;
      if (task == "synthetic") shape.input_features = 16, shape.outputs = 4;
      EXPECT_EQ(int(buildModel(c, shape, 1).size()), modelBlocks(task, depth)) << task << " at depth " << depth;
    }
}

TEST(Models, SamplesOfAMicroBatchAreIndependent) {
  // GroupNorm / LayerNorm and no dropout: a sample's output does not depend on its batch mates.
  for (const std::string task : {"fashion_mnist", "brown_lm"}) {
    Config c = Config::fromJson({{"task", task}, {"model", {{"width", 8}, {"depth", 3}, {"heads", 2}}}});
    ModelShape shape;
    torch::Tensor x;
    if (task == "brown_lm") {
      shape.kind = TaskKind::LanguageModel, shape.outputs = 11, shape.context = 9;
      x = torch::randint(0, 11, {4, 9}, torch::kInt64);
    } else {
      x = torch::randn({4, 1, 28, 28});
    }
    BlockModel m = buildModel(c, shape, 1);
    StageModule all(m, 0, m.size());
    torch::NoGradGuard g;
    auto together = all.forward(x);
    auto alone = all.forward(x.slice(0, 1, 2));
    // A layer that mixed the batch (batch norm, say) moves outputs by tenths. Rounding does not always stay below
    // 1e-6: a batch of 4 and a batch of 1 go through differently blocked kernels, the normalizations divide what
    // differs by small deviations, and a CI run once saw more than 1e-6.
    EXPECT_TRUE(torch::allclose(together.slice(0, 1, 2), alone, 1e-4, 1e-4))
        << task << ": outputs differ by up to " << (together.slice(0, 1, 2) - alone).abs().max().item<float>();
  }
}

TEST(Models, LanguageModelIsCausal) {
  Config c = Config::fromJson({{"task", "brown_lm"}, {"model", {{"width", 8}, {"depth", 2}, {"heads", 2}}}});
  ModelShape shape;
  shape.kind = TaskKind::LanguageModel, shape.outputs = 11, shape.context = 9;
  BlockModel m = buildModel(c, shape, 1);
  StageModule all(m, 0, m.size());
  torch::NoGradGuard g;
  auto x = torch::randint(0, 11, {1, 9}, torch::kInt64);
  auto y = x.clone();
  y[0][8] = (x[0][8].item<int64_t>() + 1) % 11;  // change only the last token
  auto a = all.forward(x), b = all.forward(y);
  EXPECT_TRUE(torch::allclose(a.slice(1, 0, 8), b.slice(1, 0, 8), 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(a.slice(1, 8, 9), b.slice(1, 8, 9)));
}

}  // namespace
}  // namespace ps
