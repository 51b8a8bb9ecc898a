// A stage's passes replayed from recorded graphs train exactly as the eager stage does. On a CPU the graphs are a
// stand-in that runs the recorded passes again at each replay: everything around them (the slots, the tensors the
// graphs read and write, gradients through autograd, another shape, new parameters, failures) is what runs on a GPU.
#include "engine/errors/ConfigError.h"
#include "engine/pipeline/StageGraphs.h"
#include "engine/pipeline/StageStream.h"
#include "engine/runs/config/Config.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace ps {
namespace {

// Replays by running what was recorded again, on the tensors the passes made last.
class RerunPair : public GraphPair {
 public:
  explicit RerunPair(bool failToRecord = false) : fail_(failToRecord) {}
  void record(const std::function<void()>& forward, const std::function<void()>& backward) override {
    if (fail_) throw std::runtime_error("operation not permitted when stream is capturing");
    forward_ = forward, backward_ = backward;
  }
  void replayForward() override { forward_(); }
  void replayBackward() override { backward_(); }

 private:
  bool fail_;
  std::function<void()> forward_, backward_;
};

StageGraphs::PairFactory rerun(bool fail = false) {
  return [fail] { return std::make_unique<RerunPair>(fail); };
}

BlockModel cnn(uint64_t seed = 7) {
  const nlohmann::json j = {{"task", "fashion_mnist"}, {"model", {{"width", 8}, {"depth", 4}}}};
  return buildModel(Config::fromJson(j), ModelShape{}, seed);
}

// The middle blocks of the CNN as a stage, and the inputs its previous stage would send it.
struct MiddleStage {
  BlockModel model = cnn();
  std::shared_ptr<StageModule> module = std::make_shared<StageModule>(model, 1, 3);
  torch::optim::Adam optimizer{module->parameters(), torch::optim::AdamOptions(1e-2)};
};

std::vector<torch::Tensor> activations(int microbatches, int64_t rows, uint64_t seed) {
  torch::manual_seed(seed);
  BlockModel model = cnn(11);
  StageModule first(model, 0, 1);
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> out;
  for (int m = 0; m < microbatches; ++m) out.push_back(first.forward(torch::randn({rows, 1, 28, 28})));
  return out;
}

// One step of a 1F1B-like order over three micro-batches (F0 F1 B0 F2 B1 B2): each input's gradient as the
// previous stage would get it, then the optimizer's step.
std::vector<torch::Tensor> step(MiddleStage& stage, const std::function<torch::Tensor(int, torch::Tensor)>& forward,
                                const std::vector<torch::Tensor>& inputs, uint64_t seed) {
  const int n = int(inputs.size());
  const size_t count = inputs.size();
  std::vector<torch::Tensor> in(count), out(count), sent(count);
  const auto fwd = [&](int m) {
    in[size_t(m)] = inputs[size_t(m)].clone().requires_grad_(true);
    out[size_t(m)] = forward(m, in[size_t(m)]);
  };
  const auto bwd = [&](int m) {
    torch::manual_seed(seed + uint64_t(m));
    torch::autograd::backward({out[size_t(m)]}, {torch::randn(out[size_t(m)].sizes()).to(out[size_t(m)].device())});
    sent[size_t(m)] = in[size_t(m)].grad().clone();
  };
  fwd(0), fwd(1), bwd(0);
  for (int m = 2; m < n; ++m) fwd(m), bwd(m - 1);
  bwd(n - 1);
  stage.optimizer.step();
  stage.optimizer.zero_grad();
  return sent;
}

void expectSameParameters(StageModule& a, StageModule& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  const auto ba = a.named_buffers(), bb = b.named_buffers();
  for (const auto& p : ba) EXPECT_TRUE(torch::equal(p.value(), bb[p.key()])) << p.key();
}

// One step of each stage on the same inputs: the gradients the replayed stage sends back, its parameters and its
// buffers must be the eager stage's to the bit.
void expectSameStep(MiddleStage& eager, MiddleStage& replayed, StageGraphs& graphs,
                    const std::vector<torch::Tensor>& inputs, uint64_t seed) {
  const auto want = step(
      eager, [&](int, torch::Tensor x) { return eager.module->forward(x); }, inputs, seed);
  graphs.beginStep();
  const auto got = step(
      replayed, [&](int m, torch::Tensor x) { return graphs.forward(m, x); }, inputs, seed);
  for (size_t m = 0; m < want.size(); ++m) EXPECT_TRUE(torch::equal(want[m], got[m])) << "micro-batch " << m;
  expectSameParameters(*eager.module, *replayed.module);
}

TEST(StageGraphs, ReplayedPassesTrainExactlyAsEagerOnes) {
  MiddleStage eager, replayed;
  StageGraphs graphs(replayed.module, torch::kCPU, GraphMode::Auto, true, rerun());
  ASSERT_TRUE(graphs.enabled()) << graphs.reason();
  for (int s = 0; s < 4; ++s) {
    const auto inputs = activations(3, 4, 100 + uint64_t(s));
    SCOPED_TRACE("step " + std::to_string(s));
    expectSameStep(eager, replayed, graphs, inputs, 7 * s);
  }
  // The first step warms each slot up eagerly; the second records and replays them; the rest only replay.
  EXPECT_EQ(graphs.eagerPasses(), 3);
  EXPECT_EQ(graphs.recordings(), 3);
  EXPECT_EQ(graphs.replays(), 9);
}

// Micro-batches that are never in flight together share a slot: the test's order (F0 F1 B0 F2 B1 B2) has a reuse
// distance of 2, so micro-batch 2 replays micro-batch 0's graphs, and training is still the eager stage's to the bit.
// A distance too short for the order is refused when a slot is replayed again before its backward ran.
TEST(StageGraphs, MicroBatchesNeverInFlightTogetherShareASlot) {
  MiddleStage eager, replayed;
  StageGraphs graphs(replayed.module, torch::kCPU, GraphMode::Auto, true, rerun());
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    const auto inputs = activations(3, 4, 300 + uint64_t(s));
    const auto want = step(
        eager, [&](int, torch::Tensor x) { return eager.module->forward(x); }, inputs, 5 * s);
    graphs.beginStep(2);
    const auto got = step(
        replayed, [&](int m, torch::Tensor x) { return graphs.forward(m, x); }, inputs, 5 * s);
    for (size_t m = 0; m < want.size(); ++m) EXPECT_TRUE(torch::equal(want[m], got[m])) << "micro-batch " << m;
    expectSameParameters(*eager.module, *replayed.module);
  }
  EXPECT_EQ(graphs.recordedSlots(), 2u);
  EXPECT_EQ(graphs.recordings(), 2);
  // Step 1: slots 0 and 1 warm up, and micro-batch 2 records slot 0; then every pass replays.
  EXPECT_EQ(graphs.eagerPasses(), 2);
  EXPECT_EQ(graphs.replays(), 1 + 3 * 3);

  MiddleStage tooShort;
  StageGraphs overlapping(tooShort.module, torch::kCPU, GraphMode::Auto, true, rerun());
  const auto inputs = activations(3, 4, 400);
  overlapping.beginStep(1);
  try {
    step(
        tooShort, [&](int m, torch::Tensor x) { return overlapping.forward(m, x); }, inputs, 1);
    ADD_FAILURE() << "micro-batch 2 replayed the slot micro-batch 1 still held";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("before its backward pass ran"), std::string::npos) << e.what();
  }
}

// An input of another shape: eagerly the first time, then from graphs of its own, while the slot keeps replaying the
// first shape's.
TEST(StageGraphs, AMicroBatchOfAnotherShapeGetsGraphsOfItsOwn) {
  MiddleStage eager, replayed;
  StageGraphs graphs(replayed.module, torch::kCPU, GraphMode::Auto, true, rerun());
  const auto run = [&](std::vector<torch::Tensor> inputs) { expectSameStep(eager, replayed, graphs, inputs, 1); };
  const auto shortened = [](std::vector<torch::Tensor> inputs) {
    inputs[2] = inputs[2].narrow(0, 0, 3).clone();
    return inputs;
  };
  run(activations(3, 4, 5)), run(activations(3, 4, 6));
  ASSERT_EQ(graphs.recordings(), 3);
  ASSERT_EQ(graphs.eagerPasses(), 3);
  run(shortened(activations(3, 4, 9)));
  EXPECT_EQ(graphs.eagerPasses(), 4) << "the short micro-batch warms up";
  EXPECT_EQ(graphs.replays(), 3 + 2);
  run(shortened(activations(3, 4, 10)));
  EXPECT_EQ(graphs.recordings(), 4) << "the short micro-batch's own pair";
  EXPECT_EQ(graphs.replays(), 5 + 3);
  run(activations(3, 4, 11));
  EXPECT_EQ(graphs.recordings(), 4) << "the full shape's pair was kept";
  EXPECT_EQ(graphs.replays(), 8 + 3);
  auto third = activations(3, 4, 12);
  third[2] = third[2].narrow(0, 0, 2).clone();
  run(third);
  EXPECT_EQ(graphs.eagerPasses(), 5) << "a third shape in one slot runs eagerly";
  EXPECT_EQ(graphs.recordings(), 4);
}

TEST(StageGraphs, ParametersGivenNewMemoryAreRecordedAgain) {
  MiddleStage eager, replayed;
  StageGraphs graphs(replayed.module, torch::kCPU, GraphMode::Auto, true, rerun());
  const auto run = [&](int s) {
    const auto inputs = activations(3, 4, 40 + uint64_t(s));
    SCOPED_TRACE("step " + std::to_string(s));
    expectSameStep(eager, replayed, graphs, inputs, 2);
  };
  run(0), run(1);
  ASSERT_EQ(graphs.recordings(), 3);
  // The same values in new memory (as set_data gives a re-drawn decoder), which the recorded graphs do not read.
  for (auto& p : replayed.module->parameters()) p.set_data(p.detach().clone());
  run(2), run(3);
  EXPECT_EQ(graphs.recordings(), 6);
  EXPECT_EQ(graphs.eagerPasses(), 6);  // each slot warmed up again
}

// A fixed random decoder in front of the stage keeps its weight as a buffer, which a new width re-draws in new memory.
TEST(StageGraphs, ABufferGivenNewMemoryIsRecordedAgain) {
  const auto decoded = [](std::shared_ptr<StageModule> module) {
    torch::manual_seed(3);
    auto in = std::make_shared<Bottleneck>();
    in->boundary = 0, in->features = 8, in->width = 2, in->init = "random";
    in->decoder = CodeProjection(torch::randn({8, 2}), 1, /*trained=*/false);
    module->attach(in, nullptr);
    return module;
  };
  MiddleStage eager, replayed;
  decoded(eager.module), decoded(replayed.module);
  ASSERT_FALSE(replayed.module->buffers().empty());
  StageGraphs graphs(replayed.module, torch::kCPU, GraphMode::Auto, true, rerun());
  const auto run = [&](int s) {
    auto inputs = activations(3, 4, 60 + uint64_t(s));
    for (auto& x : inputs) x = x.narrow(1, 0, 2).clone();  // the code: 2 of the 8 channels
    SCOPED_TRACE("step " + std::to_string(s));
    expectSameStep(eager, replayed, graphs, inputs, 5);
  };
  run(0), run(1);
  ASSERT_EQ(graphs.recordings(), 3);
  for (auto& b : replayed.module->buffers()) b.set_data(b.detach().clone());
  run(2), run(3);
  EXPECT_EQ(graphs.recordings(), 6);
}

// The real graphs, where there is a GPU: the same training as eager to rounding (cuDNN may pick other kernels), with a
// slot per micro-batch and with micro-batches 0 and 2 sharing one (whose replay overwrites the memory the first
// micro-batch's passes used: a stand-in that runs the passes again cannot show that).
TEST(StageGraphs, OnAGpuRecordedGraphsTrainAsEagerPasses) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device here: CUDA graphs are checked on a GPU";
  if (!recordsCudaGraphs()) GTEST_SKIP() << "this build's LibTorch has no CUDA library, so no CUDA graphs";
  const torch::Device gpu(torch::kCUDA, 0);
  for (int reuse : {0, 2}) {
    SCOPED_TRACE("reuse distance " + std::to_string(reuse));
    MiddleStage eager, replayed;
    eager.module->to(gpu), replayed.module->to(gpu);
    const StageStream own(0, gpu, /*own=*/true, /*check=*/false);
    const StageStream::Scope onStream(own);
    StageGraphs graphs(replayed.module, gpu, GraphMode::On, /*ownStream=*/true);
    ASSERT_TRUE(graphs.enabled()) << graphs.reason();
    for (int s = 0; s < 4; ++s) {
      auto inputs = activations(3, 4, 80 + uint64_t(s));
      for (auto& x : inputs) x = x.to(gpu);
      const auto want = step(
          eager, [&](int, torch::Tensor x) { return eager.module->forward(x); }, inputs, 9 * s);
      graphs.beginStep(reuse);
      const auto got = step(
          replayed, [&](int m, torch::Tensor x) { return graphs.forward(m, x); }, inputs, 9 * s);
      for (size_t m = 0; m < want.size(); ++m)
        EXPECT_TRUE(torch::allclose(want[m], got[m], 1e-4, 1e-5)) << "step " << s << " mb " << m;
      const auto pe = eager.module->named_parameters(), pr = replayed.module->named_parameters();
      for (const auto& p : pe) EXPECT_TRUE(torch::allclose(p.value(), pr[p.key()], 1e-4, 1e-5)) << p.key();
    }
    EXPECT_EQ(graphs.recordings(), reuse ? 2 : 3);
    EXPECT_EQ(graphs.replays(), reuse ? 10 : 9);
  }
}

TEST(StageGraphs, WhereGraphsCannotBeHadTheStageRunsEagerlyAndSaysWhy) {
  MiddleStage stage;
  const StageGraphs off(stage.module, torch::kCPU, GraphMode::Off, true);
  EXPECT_FALSE(off.enabled());
  const StageGraphs onCpu(stage.module, torch::kCPU, GraphMode::Auto, true);
  EXPECT_FALSE(onCpu.enabled());
  EXPECT_NE(onCpu.reason().find("CPU"), std::string::npos) << onCpu.reason();
  try {
    StageGraphs insisted(stage.module, torch::kCPU, GraphMode::On, true);
    ADD_FAILURE() << "pipeline.cuda_graphs=on on a CPU stage was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline.cuda_graphs=on"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("auto"), std::string::npos) << e.what();
  }

  // A stage whose encoder's error is measured from each pass.
  auto bottleneck = std::make_shared<Bottleneck>();
  bottleneck->boundary = 1, bottleneck->features = 8, bottleneck->width = 2, bottleneck->init = "learned";
  bottleneck->encoder = CodeProjection(torch::randn({2, 8}), 1, true);
  bottleneck->decoder = CodeProjection(torch::randn({8, 2}), 1, true);
  auto encoding = std::make_shared<StageModule>(stage.model, 1, 3);
  encoding->attach(nullptr, bottleneck);
  const StageGraphs withEncoder(encoding, torch::kCPU, GraphMode::Auto, true, rerun());
  EXPECT_NE(withEncoder.reason().find("bottleneck"), std::string::npos) << withEncoder.reason();
}

// A recording that fails stops the run under either mode, naming the setting that avoids it: LibTorch's allocator
// does not reliably take back what a failed recording set aside.
TEST(StageGraphs, ARecordingThatFailsStopsTheRunNamingTheSetting) {
  const auto inputs = activations(3, 4, 21);
  for (GraphMode mode : {GraphMode::Auto, GraphMode::On}) {
    MiddleStage stage;
    StageGraphs graphs(stage.module, torch::kCPU, mode, true, rerun(true));
    graphs.beginStep();
    step(
        stage, [&](int m, torch::Tensor x) { return graphs.forward(m, x); }, inputs, 4);  // the warm-up passes
    graphs.beginStep();
    try {
      graphs.forward(0, inputs[0].clone().requires_grad_(true));
      ADD_FAILURE() << "a failed recording went on";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("operation not permitted when stream is capturing"), std::string::npos) << what;
      EXPECT_NE(what.find("pipeline.cuda_graphs=off"), std::string::npos) << what;
    }
    EXPECT_FALSE(graphs.enabled());
    EXPECT_EQ(graphs.recordings(), 0);
  }
}

TEST(StageGraphs, ModesAreNamedAsTheSettingIs) {
  EXPECT_EQ(graphModeOf("auto"), GraphMode::Auto);
  EXPECT_EQ(graphModeOf("on"), GraphMode::On);
  EXPECT_EQ(graphModeOf("off"), GraphMode::Off);
  EXPECT_THROW(graphModeOf("sometimes"), ConfigError);
}

}  // namespace
}  // namespace ps
