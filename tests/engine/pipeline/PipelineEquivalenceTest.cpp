// With identity links, S stages must train exactly like 1 stage on the same micro-batches
// (gradient accumulation), up to float reassociation.
#include "engine/errors/DivergedError.h"
#include "engine/pipeline/Pipeline.h"
#include "engine/pipeline/StageWorker.h"
#include "engine/tensors/DeviceChecks.h"
#include "tests/engine/pipeline/ThreeStagePipeline.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ps {
namespace {

struct Case {
  std::string task;
  int stages, microbatches;
  std::string schedule;
};

Config configFor(const std::string& task) {
  nlohmann::json j = {{"task", task}, {"model", {{"width", 16}, {"depth", 6}, {"heads", 2}}}};
  return Config::fromJson(j);
}

ModelShape shapeFor(const std::string& task) {
  ModelShape s;
  if (task == "brown_lm") {
    s.kind = TaskKind::LanguageModel;
    s.outputs = 23;
    s.context = 12;
  }
  return s;
}

// A fixed batch for the task: random images with labels, or random token windows.
std::pair<torch::Tensor, torch::Tensor> batchFor(const std::string& task, int64_t step) {
  torch::manual_seed(1000 + step);
  if (task == "brown_lm") {
    auto tokens = torch::randint(0, 23, {8, 13}, torch::kInt64);
    return {tokens.slice(1, 0, 12), tokens.slice(1, 1, 13)};
  }
  return {torch::randn({8, 1, 28, 28}), torch::randint(0, 10, {8}, torch::kInt64)};
}

std::vector<std::pair<std::string, torch::Tensor>> train(const Case& c, int stages) {
  Config config = configFor(c.task);
  BlockModel model = buildModel(config, shapeFor(c.task), 42);
  PipelineOptions o;
  // Cut evenly by block index so every stage has work.
  o.starts.clear();
  for (int s = 0; s < stages; ++s) o.starts.push_back(size_t(s) * model.size() / size_t(stages));
  o.microbatches = c.microbatches;
  o.schedule = c.schedule;
  o.optimizer = {"adam", 1e-2, 0.9, 0};
  o.threads_per_stage = 1;
  Pipeline pipeline(std::move(model), o);
  for (int64_t step = 1; step <= 3; ++step) {
    auto [x, y] = batchFor(c.task, step);
    auto r = pipeline.step(x, y, step, 0);
    EXPECT_TRUE(std::isfinite(r.loss));
  }
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (auto& [name, p] : pipeline.namedParameters()) out.emplace_back(name, p.detach().clone());
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.task << " S=" << c.stages << " M=" << c.microbatches << " " << c.schedule;
}

class PipelineEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(PipelineEquivalence, MatchesSingleStage) {
  const Case c = GetParam();
  auto reference = train(c, 1);
  auto staged = train(c, c.stages);
  ASSERT_EQ(reference.size(), staged.size());
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    ASSERT_EQ(reference[i].first, staged[i].first);
    const auto& a = reference[i].second;
    const auto& b = staged[i].second;
    ASSERT_EQ(a.sizes(), b.sizes()) << reference[i].first;
    worst = std::max(worst, (a - b).abs().max().item<double>());
    EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5)) << reference[i].first << " differs by "
                                                   << (a - b).abs().max().item<double>();
  }
  // Training moved the parameters: the comparison is not between two untouched models.
  Config config = configFor(c.task);
  BlockModel fresh = buildModel(config, shapeFor(c.task), 42);
  auto initial = fresh.blocks[0].ptr()->parameters()[0];
  EXPECT_GT((initial - reference[0].second).abs().max().item<double>(), 1e-3);
  RecordProperty("max_abs_difference", std::to_string(worst));
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  const auto& c = info.param;
  return c.task + "_S" + std::to_string(c.stages) + "_M" + std::to_string(c.microbatches) + "_" +
         (c.schedule == "1f1b" ? "1F1B" : "GPipe");
}

INSTANTIATE_TEST_SUITE_P(
    Models, PipelineEquivalence,
    ::testing::Values(Case{"fashion_mnist", 2, 1, "1f1b"}, Case{"fashion_mnist", 2, 4, "1f1b"},
                      Case{"fashion_mnist", 4, 1, "1f1b"}, Case{"fashion_mnist", 4, 4, "1f1b"},
                      Case{"fashion_mnist", 4, 4, "gpipe"}, Case{"brown_lm", 2, 1, "1f1b"},
                      Case{"brown_lm", 2, 4, "1f1b"}, Case{"brown_lm", 4, 1, "gpipe"}, Case{"brown_lm", 4, 4, "1f1b"},
                      Case{"brown_lm", 4, 4, "gpipe"}),
    caseName);

// Reading the per-message figures once per step (what a GPU stage does) instead of as each is made changes nothing a
// run reports or learns: the loss and hits of the last stage, every link's error sums and Accordion's norm, and the
// parameters, bit for bit, over steps with compressed, compensated links in both directions.
TEST(PipelineDeviceReads, ReadingFiguresOncePerStepChangesNoBit) {
  struct Trained {
    std::vector<StepResult> steps;
    std::vector<std::pair<std::string, torch::Tensor>> parameters;
  };
  auto train = [](bool deferred) {
    CompressionOptions topk;
    topk.method = "topk", topk.k = 0.1, topk.feedback = "ef";
    CompressionOptions quantize;
    quantize.method = "quantize", quantize.bits = 4;
    PipelineOptions o;
    o.deferred_reads = deferred;
    Pipeline pipeline = fixtures::threeStagePipeline(4, {topk, quantize}, {quantize, topk}, o);
    pipeline.link(0).measureNorm(Direction::Forward, true);
    Trained t;
    for (int64_t step = 1; step <= 3; ++step) {
      auto [x, y] = batchFor("fashion_mnist", step);
      t.steps.push_back(pipeline.step(x, y, step, 0));
    }
    for (auto& [name, p] : pipeline.namedParameters()) t.parameters.emplace_back(name, p.detach().clone());
    return t;
  };
  const Trained now = train(false), later = train(true);
  ASSERT_EQ(now.steps.size(), later.steps.size());
  for (size_t i = 0; i < now.steps.size(); ++i) {
    const StepResult &a = now.steps[i], &b = later.steps[i];
    EXPECT_EQ(a.loss, b.loss) << "step " << i;
    EXPECT_EQ(a.correct, b.correct) << "step " << i;
    EXPECT_EQ(a.predictions, b.predictions);
    ASSERT_EQ(a.traffic.size(), 4u);
    ASSERT_EQ(a.traffic.size(), b.traffic.size());
    for (size_t l = 0; l < a.traffic.size(); ++l) {
      const LinkTraffic &ta = a.traffic[l], &tb = b.traffic[l];
      EXPECT_GT(ta.err_sq, 0.0) << "link " << l;
      EXPECT_EQ(ta.err_sq, tb.err_sq) << "step " << i << " link " << l;
      EXPECT_EQ(ta.ref_sq, tb.ref_sq) << "step " << i << " link " << l;
      EXPECT_EQ(ta.err_sq_compensated, tb.err_sq_compensated) << "step " << i << " link " << l;
      EXPECT_EQ(ta.ref_sq_compensated, tb.ref_sq_compensated) << "step " << i << " link " << l;
      EXPECT_EQ(ta.measures, tb.measures) << "step " << i << " link " << l;
    }
    EXPECT_GT(a.traffic[0].measures.at(adapt_measure::kSquaredNorm), 0.0);
  }
  ASSERT_EQ(now.parameters.size(), later.parameters.size());
  for (size_t i = 0; i < now.parameters.size(); ++i)
    EXPECT_TRUE(torch::equal(now.parameters[i].second, later.parameters[i].second)) << now.parameters[i].first;
}

// Under deferred reads a stage reads its checks with its loss, once a step (on the CPU the host kernels answer them
// and hold any failure until then): a value that is not finite still stops the step before any stage updates, and
// the step reports the divergence where it began even though the stages that received its NaN found it too (in
// stage order, before the sender's).
TEST(PipelineDeviceReads, ChecksAreReadOncePerStepAndStillStopTheStepBeforeTheUpdate) {
  CompressionOptions plain;
  plain.method = "none";
  auto parameters = [](Pipeline& p) {
    std::vector<torch::Tensor> all;
    for (auto& [name, t] : p.namedParameters()) all.push_back(t.detach().clone());
    return all;
  };
  for (const bool deferred : {false, true}) {
    SCOPED_TRACE(deferred ? "deferred" : "at once");
    PipelineOptions o;
    o.deferred_reads = deferred;
    Pipeline pipeline = fixtures::threeStagePipeline(2, {plain, plain}, {plain, plain}, o);
    auto [x, y] = batchFor("fashion_mnist", 1);
    const auto before = deviceCheckTally();
    pipeline.step(x, y, 1, 0);
    const auto after = deviceCheckTally();
    EXPECT_EQ(after.readAtOnce, before.readAtOnce);  // on the CPU every check is the host kernel's: nothing waits
    EXPECT_EQ(after.deferred, before.deferred);

    // A NaN in the first stage (sent forward) and in the last (sent back as a gradient).
    for (const bool last : {false, true}) {
      SCOPED_TRACE(last ? "last stage" : "first stage");
      Pipeline p = fixtures::threeStagePipeline(2, {plain, plain}, {plain, plain}, o);
      auto named = p.namedParameters();
      torch::Tensor poisoned = (last ? named.back() : named.front()).second;
      {
        torch::NoGradGuard noGrad;
        poisoned.view({-1})[0] = NAN;
      }
      const auto was = parameters(p);
      EXPECT_THROW(p.step(x, y, 1, 0), DivergedError);
      const auto now = parameters(p);
      ASSERT_EQ(was.size(), now.size());
      for (size_t i = 0; i < was.size(); ++i)
        EXPECT_TRUE(torch::equal(was[i].nan_to_num(), now[i].nan_to_num())) << "parameter " << i << " changed";
    }
  }
}

// The exchange between replicas runs before the update under the same deferred reads: its checks wait for the
// exchange's end (a replica whose check failed still takes its part in the collectives), and a failure still stops
// the step before the update.
TEST(PipelineDeviceReads, TheExchangesChecksWaitForItsEndAndStillStopTheUpdate) {
  const nlohmann::json j = {{"task", "fashion_mnist"}, {"model", {{"width", 8}, {"depth", 3}}}};
  BlockModel model = buildModel(Config::fromJson(j), ModelShape{}, 3);
  auto module = std::make_shared<StageModule>(model, 0, model.size());
  StageWorker worker(0, 1, module, torch::kCPU, OptimizerOptions{}, 1);
  auto work = std::make_shared<StepWork>();
  auto [x, y] = batchFor("fashion_mnist", 1);
  work->inputs = {x}, work->targets = {y}, work->scales = {1.0};
  bool fail = false, deferredThere = false, wentOn = false;
  worker.setBeforeUpdate([&](StageStepResult&) {
    deferredThere = checksDeferred();
    requireOnHost(!fail, [] { throw DivergedError("a gradient to exchange holds a NaN"); });
    wentOn = true;
  });
  worker.deferReads(true);
  const std::vector<PipelineOp> ops = {{PipelineOp::Forward, 0}, {PipelineOp::Backward, 0}};
  std::vector<torch::Tensor> before;
  for (const auto& p : module->parameters()) before.push_back(p.detach().clone());
  fail = true;
  EXPECT_THROW(worker.trainStep(ops, work).get(), DivergedError);
  EXPECT_TRUE(deferredThere);
  EXPECT_TRUE(wentOn) << "the exchange stopped at its check instead of finishing";
  const auto after = module->parameters();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << "parameter " << i;

  fail = false;
  EXPECT_NO_THROW(worker.trainStep(ops, work).get());
  EXPECT_FALSE(torch::equal(before[0], module->parameters()[0])) << "a clean step updates";
}

}  // namespace
}  // namespace ps
