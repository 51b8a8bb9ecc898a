// The learned bottleneck on a pipeline boundary: its layers train with the stages, what crosses is its code, and it
// behaves exactly like no bottleneck when it is the identity.
#include "engine/compress/Codec.h"
#include "engine/models/CodeBottleneck.h"
#include "engine/pipeline/Pipeline.h"
#include "engine/session/Checkpoint.h"
#include "engine/session/Session.h"
#include "tests/TestFiles.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

namespace ps {
namespace {

BlockModel smallCnn() {
  return buildModel(Config::fromJson({{"task", "fashion_mnist"}, {"model", {{"width", 8}, {"depth", 4}}}}),
                    ModelShape{}, 42);
}

std::pair<torch::Tensor, torch::Tensor> batch(int64_t step) {
  torch::manual_seed(500 + step);
  return {torch::randn({8, 1, 28, 28}), torch::randint(0, 10, {8}, torch::kInt64)};
}

// One sample's activation at the boundary before block `cut`.
std::vector<int64_t> sampleAt(BlockModel& model, size_t cut) {
  torch::NoGradGuard noGrad;
  torch::Tensor h = torch::zeros({1, 1, 28, 28});
  for (size_t b = 0; b < cut; ++b) {
    model.blocks[b].ptr()->eval();
    h = model.blocks[b].forward(h);
    model.blocks[b].ptr()->train();
  }
  auto s = h.sizes().vec();
  s.erase(s.begin());
  return s;
}

CompressionOptions bottleneckOptions(int64_t width, const std::string& init, int valueBits = 32) {
  CompressionOptions o;
  o.method = "bottleneck";
  o.extra["code_width"] = width;
  o.extra["code_init"] = init;
  o.value_bits = valueBits;
  return o;
}

PipelineOptions twoStages(size_t cut, std::shared_ptr<Bottleneck> b, const OptimizerOptions& optimizer,
                          int microbatches = 1) {
  PipelineOptions o;
  o.starts = {0, cut};
  o.microbatches = microbatches;
  o.optimizer = optimizer;
  if (b) {
    o.forward = {bottleneckOptions(b->width, b->init)};
    o.bottlenecks = {b};
  }
  return o;
}

// A bottleneck as wide as the features it codes, both halves the identity (made by hand: the lab refuses a code that
// compresses nothing).
std::shared_ptr<Bottleneck> identityBottleneck(int64_t features, bool trained) {
  auto b = std::make_shared<Bottleneck>();
  b->features = b->width = features;
  b->init = trained ? "learned" : "random";
  b->encoder = CodeProjection(torch::eye(features), 1, trained);
  b->decoder = CodeProjection(torch::eye(features), 1, trained);
  return b;
}

TEST(Bottleneck, AtFullWidthAsTheIdentityAPipelineTrainsExactlyAsWithoutOne) {
  const OptimizerOptions adam{"adam", 1e-2, 0.9, 0};
  BlockModel plainModel = smallCnn(), codedModel = smallCnn();
  const size_t cut = 2;
  const auto sample = sampleAt(codedModel, cut);
  ASSERT_EQ(sample.size(), 3u);
  Pipeline plain(std::move(plainModel), twoStages(cut, nullptr, adam, 2));
  Pipeline coded(std::move(codedModel), twoStages(cut, identityBottleneck(sample[0], false), adam, 2));
  for (int64_t step = 1; step <= 4; ++step) {
    auto [x, y] = batch(step);
    const auto a = plain.step(x, y, step, 0), b = coded.step(x, y, step, 0);
    EXPECT_EQ(a.loss, b.loss) << "step " << step;
    EXPECT_EQ(a.correct, b.correct) << "step " << step;
    // What crossed is the activation itself: the same bytes as a float32 link's payload would be, minus nothing.
    EXPECT_EQ(a.traffic[0].raw_bytes, b.traffic[0].raw_bytes);
  }
  const auto p = plain.namedParameters(), q = coded.namedParameters();
  ASSERT_EQ(p.size(), q.size());  // the fixed projection is a buffer, not a parameter
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].first, q[i].first);
    EXPECT_TRUE(torch::equal(p[i].second, q[i].second)) << p[i].first;
  }
}

TEST(Bottleneck, ALearnedOneStartsAsItsInitialProjectionAndThenLearns) {
  BlockModel plainModel = smallCnn(), codedModel = smallCnn();
  const auto sample = sampleAt(codedModel, 2);
  auto b = identityBottleneck(sample[0], true);
  Pipeline plain(std::move(plainModel), twoStages(2, nullptr, {"adam", 1e-2, 0.9, 0}));
  Pipeline coded(std::move(codedModel), twoStages(2, b, {"adam", 1e-2, 0.9, 0}));
  auto [x, y] = batch(1);
  EXPECT_EQ(plain.step(x, y, 1, 0).loss, coded.step(x, y, 1, 0).loss);  // the same forward before any update
  // Its halves are the stages' parameters, named by the boundary, and the update moved them off the identity.
  std::vector<std::string> names;
  for (const auto& [name, tensor] : coded.namedParameters())
    if (name.rfind("code", 0) == 0) {
      names.push_back(name);
      EXPECT_FALSE(torch::equal(tensor, torch::eye(sample[0]))) << name;
    }
  EXPECT_EQ(names, (std::vector<std::string>{"code0_enc.weight", "code0_dec.weight"}));
}

// The gradients the pipeline hands each half (read back from one SGD step of rate 1) are those of the loss through the
// same layers in one piece (in double precision, so to float32's rounding through the ReLUs' kinks), which central
// differences confirm.
TEST(Bottleneck, GradientsReachBothHalvesAsFiniteDifferencesOfTheLossSay) {
  BlockModel model = smallCnn(), reference = smallCnn();
  const size_t cut = 2;
  const auto sample = sampleAt(model, cut);
  auto b = makeBottleneck(bottleneckOptions(3, "learned"), 0, sample, 7);
  const auto data = batch(1);
  const torch::Tensor x = data.first, y = data.second;

  for (auto& block : reference.blocks) block.ptr()->to(torch::kDouble);
  std::vector<CodeProjection> halves{CodeProjection(b->encoder->weight().detach().to(torch::kDouble), 1, true),
                                     CodeProjection(b->decoder->weight().detach().to(torch::kDouble), 1, true)};
  auto loss = [&] {
    torch::Tensor h = x.to(torch::kDouble);
    for (size_t i = 0; i < reference.size(); ++i) {
      if (i == cut) h = halves[1]->forward(halves[0]->forward(h));
      h = reference.blocks[i].forward(h);
    }
    return lossOf(TaskKind::Classifier, h, y);
  };
  loss().backward();
  // ReLUs and pooling make the loss piecewise smooth: the differences agree to a part in a thousand, not to rounding.
  const double eps = 1e-6;
  std::vector<torch::Tensor> expected;
  for (auto& half : halves) {
    auto w = half->weight();
    expected.push_back(w.grad().clone());
    auto differences = torch::zeros_like(w);
    torch::NoGradGuard noGrad;
    std::vector<int64_t> probed;  // every third entry: enough to catch a wrong gradient, a third of the passes
    for (int64_t i = 0; i < w.numel(); i += 3) {
      probed.push_back(i);
      const double kept = w.view(-1)[i].item<double>();
      w.view(-1)[i].fill_(kept + eps);
      const double up = loss().item<double>();
      w.view(-1)[i].fill_(kept - eps);
      const double down = loss().item<double>();
      w.view(-1)[i].fill_(kept);
      differences.view(-1)[i] = (up - down) / (2 * eps);
    }
    const auto at = torch::tensor(probed);
    const auto exact = expected.back().view(-1).index_select(0, at),
               estimate = differences.view(-1).index_select(0, at);
    EXPECT_LT((estimate - exact).norm().item<double>() / exact.norm().item<double>(), 1e-3);
  }

  std::vector<torch::Tensor> before{b->encoder->weight().clone(), b->decoder->weight().clone()};
  Pipeline pipeline(std::move(model), twoStages(cut, b, {"sgd", 1.0, 0, 0}));
  pipeline.step(x, y, 1, 0);
  const std::vector<CodeProjection> trained{b->encoder, b->decoder};
  for (size_t h = 0; h < 2; ++h) {
    const auto grad = (before[h] - trained[h]->weight()).to(torch::kDouble);  // SGD at rate 1: the step
    ASSERT_GT(expected[h].abs().max().item<double>(), 1e-3) << "half " << h << " has no gradient to reach";
    const double off = (grad - expected[h]).norm().item<double>() / expected[h].norm().item<double>();
    EXPECT_LT(off, 2e-3) << (h ? "decoder" : "encoder") << ": the pipeline's " << grad << " the loss's " << expected[h];
  }
}

TEST(Bottleneck, TheCodeCrossesBothWaysAndRawBytesCountTheActivationItStandsFor) {
  for (int bits : {32, 8}) {
    BlockModel model = smallCnn();
    const size_t cut = 2;
    const auto sample = sampleAt(model, cut);
    const int64_t width = 2, rows = 4;  // two micro-batches of four
    auto b = makeBottleneck(bottleneckOptions(width, "learned", bits), 0, sample, 3);
    auto o = twoStages(cut, b, {"adam", 1e-3, 0.9, 0}, 2);
    o.forward = {bottleneckOptions(width, "learned", bits)};
    Pipeline pipeline(std::move(model), o);
    auto [x, y] = batch(1);
    const auto r = pipeline.step(x, y, 1, 0);
    const int64_t activation = rows * sample[0] * sample[1] * sample[2];
    const int64_t code = rows * width * sample[1] * sample[2];
    const auto codeShape = std::vector<int64_t>{rows, width, sample[1], sample[2]};
    const uint64_t forwardMessage =
        makeCodec(bottleneckOptions(width, "learned", bits))->encode(torch::randn(codeShape)).size();
    const uint64_t backwardMessage = makeCodec("none")->encode(torch::randn(codeShape)).size();
    const auto &f = r.traffic[0], &g = r.traffic[1];
    EXPECT_EQ(f.messages, 2u);
    EXPECT_EQ(f.wire_bytes, 2 * forwardMessage) << bits << " bits";
    EXPECT_EQ(g.wire_bytes, 2 * backwardMessage) << "the gradient of the code, float32";
    // The code's values plus a header of a few dozen bytes; 8-bit values a quarter and their scales.
    EXPECT_GE(forwardMessage, uint64_t(code) * uint64_t(bits) / 8);
    EXPECT_LT(forwardMessage, uint64_t(code) * uint64_t(bits) / 8 + uint64_t(code) / 64 + 64);
    EXPECT_EQ(f.raw_bytes, uint64_t(2 * activation * 4));
    EXPECT_EQ(g.raw_bytes, uint64_t(2 * activation * 4));
  }
}

// The forward direction's error is the reconstruction's: the next stage's decoder on the code as delivered, against the
// activation the code stands for, measured on the side; the codec's own error on the code is the compensated figure.
TEST(Bottleneck, TheForwardErrorIsTheReconstructionAgainstTheActivationItStandsFor) {
  for (int bits : {32, 4}) {
    BlockModel model = smallCnn();
    const size_t cut = 2;
    const auto sample = sampleAt(model, cut);
    auto b = makeBottleneck(bottleneckOptions(2, "random", bits), 0, sample, 4);
    torch::Tensor x;  // the activation at the boundary, as the first stage computes it before any update
    const auto data = batch(1);
    {
      torch::NoGradGuard noGrad;
      x = data.first;
      for (size_t i = 0; i < cut; ++i) x = model.blocks[i].forward(x);
    }
    const double projected = ((b->decoder->forward(b->encoder->forward(x)) - x).norm() / x.norm()).item<double>();
    auto o = twoStages(cut, b, {"adam", 1e-3, 0.9, 0});
    o.forward = {bottleneckOptions(2, "random", bits)};
    Pipeline pipeline(std::move(model), o);
    const LinkTraffic f = pipeline.step(data.first, data.second, 1, 0).traffic[0];
    if (bits == 32) {
      EXPECT_NEAR(f.rel_error, projected, 1e-5);
      EXPECT_EQ(f.rel_error_compensated, 0);  // float32 codes cross exactly
    } else {
      EXPECT_GT(f.rel_error, projected);  // the code's rounding adds to what the projection loses
      EXPECT_GT(f.rel_error_compensated, 0.01);
      EXPECT_LT(f.rel_error, projected + 0.2);
    }
  }
  // As the identity it loses nothing.
  BlockModel model = smallCnn();
  const auto sample = sampleAt(model, 2);
  Pipeline pipeline(std::move(model), twoStages(2, identityBottleneck(sample[0], false), {"adam", 1e-3, 0.9, 0}));
  const auto data = batch(2);
  EXPECT_EQ(pipeline.step(data.first, data.second, 1, 0).traffic[0].rel_error, 0);
}

TEST(Bottleneck, PrincipalComponentsCodeALowRankBatchAlmostExactlyAndARandomProjectionDoesNot) {
  torch::manual_seed(11);
  // 64 images of 12 channels whose channels span 3 directions, plus a little noise.
  auto mix = torch::randn({3, 12});
  auto x = torch::einsum("nkhw,kc->nchw", {torch::randn({64, 3, 5, 5}), mix}) + 0.01 * torch::randn({64, 12, 5, 5});
  auto pca = makeBottleneck(bottleneckOptions(3, "pca"), 0, {12, 5, 5}, 1);
  auto random = makeBottleneck(bottleneckOptions(3, "random"), 0, {12, 5, 5}, 1);
  initFromPrincipalComponents(*pca, x);
  torch::NoGradGuard noGrad;
  auto error = [&](Bottleneck& b) {
    return ((b.decoder->forward(b.encoder->forward(x)) - x).norm() / x.norm()).item<double>();
  };
  EXPECT_LT(error(*pca), 0.02);
  EXPECT_GT(error(*random), 0.3);
  // Both encoders have orthonormal rows; the decoder is the encoder's transpose.
  for (auto* b : {pca.get(), random.get()}) {
    const auto& e = b->encoder->weight();
    EXPECT_TRUE(torch::allclose(torch::matmul(e, e.t()), torch::eye(3), 1e-4, 1e-5)) << b->init;
    EXPECT_TRUE(torch::equal(b->decoder->weight(), e.t())) << b->init;
  }
  // The random projection is fixed: its weights are buffers, not parameters.
  EXPECT_TRUE(random->encoder->parameters().empty());
  EXPECT_EQ(pca->encoder->parameters().size(), 1u);
}

TEST(Bottleneck, TheSeedAndBoundaryDrawTheProjectionAndACodeAsWideAsItsFeaturesIsRefused) {
  const auto opts = bottleneckOptions(4, "learned");
  auto a = makeBottleneck(opts, 1, {16, 7, 7}, 5), b = makeBottleneck(opts, 1, {16, 7, 7}, 5);
  auto c = makeBottleneck(opts, 2, {16, 7, 7}, 5), d = makeBottleneck(opts, 1, {16, 7, 7}, 6);
  EXPECT_TRUE(torch::equal(a->encoder->weight(), b->encoder->weight()));
  EXPECT_FALSE(torch::equal(a->encoder->weight(), c->encoder->weight()));
  EXPECT_FALSE(torch::equal(a->encoder->weight(), d->encoder->weight()));
  // A sequence's hidden units are its last dimension.
  auto seq = makeBottleneck(opts, 0, {12, 32}, 5);
  EXPECT_EQ(seq->features, 32);
  EXPECT_EQ(seq->encoder->forward(torch::randn({2, 12, 32})).sizes(), (std::vector<int64_t>{2, 12, 4}));
  try {
    makeBottleneck(bottleneckOptions(16, "learned"), 1, {16, 7, 7}, 5);
    ADD_FAILURE() << "a code as wide as the channels was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("code_width = 16 is no narrower than the 16 channels"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("use 1..15"), std::string::npos) << e.what();
  }
}

// Across processes the sending stage holds a copy of the next stage's decoder, brought up to date from the bytes
// every step report carries: they load back into the weights exactly, and bytes of another size are refused.
TEST(Bottleneck, DecoderWeightsTravelAsBytesAndOnlyTheirOwnSizeIsTaken) {
  auto trained = makeBottleneck(bottleneckOptions(3, "learned"), 0, {12, 5, 5}, 2);
  auto copy = makeBottleneck(bottleneckOptions(3, "learned"), 0, {12, 5, 5}, 2);
  {
    torch::NoGradGuard noGrad;
    trained->decoder->weight().add_(torch::randn_like(trained->decoder->weight()));
  }
  const auto bytes = decoderWeights(*trained);
  EXPECT_EQ(bytes.size(), 12u * 3 * sizeof(float));
  ASSERT_FALSE(torch::equal(copy->decoder->weight(), trained->decoder->weight()));
  loadDecoderWeights(*copy, bytes);
  EXPECT_TRUE(torch::equal(copy->decoder->weight(), trained->decoder->weight()));
  auto wider = makeBottleneck(bottleneckOptions(4, "learned"), 0, {12, 5, 5}, 2);
  try {
    loadDecoderWeights(*wider, bytes);
    ADD_FAILURE() << "a 12 x 3 decoder's bytes were taken by a 12 x 4 one";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("are 144 bytes, not the 192 of a 12 x 4 decoder"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(loadDecoderWeights(*copy, {}), std::invalid_argument);
}

TEST(Bottleneck, ItsLayersSurviveACheckpointRoundTripAndAnotherWidthIsRefusedNamingIt) {
  const std::string path = (test::freshDir("pipesqueeze-bottleneck") / "coded.pt").string();
  BlockModel model = smallCnn();
  const auto sample = sampleAt(model, 2);
  auto b = makeBottleneck(bottleneckOptions(3, "learned"), 0, sample, 9);
  Pipeline pipeline(std::move(model), twoStages(2, b, {"adam", 1e-2, 0.9, 0}));
  auto [x, y] = batch(1);
  pipeline.step(x, y, 1, 0);  // trained away from its start
  saveCheckpoint(path, pipeline.namedParameters(), "", "{}");

  auto fresh = makeBottleneck(bottleneckOptions(3, "learned"), 0, sample, 9);
  EXPECT_FALSE(torch::equal(fresh->encoder->weight(), b->encoder->weight()));
  loadCheckpoint(path, {fresh});
  EXPECT_TRUE(torch::equal(fresh->encoder->weight(), b->encoder->weight()));
  EXPECT_TRUE(torch::equal(fresh->decoder->weight(), b->decoder->weight()));
  BlockModel again = smallCnn();
  loadCheckpoint(path, again);  // the blocks load as before, the bottleneck's entries beside them
  try {
    loadCheckpoint(path, {makeBottleneck(bottleneckOptions(5, "learned"), 0, sample, 9)});
    ADD_FAILURE() << "a checkpoint's code of width 3 loaded into one of width 5";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("code_width"), std::string::npos) << e.what();
  }
}

TEST(Bottleneck, ARunRefusesToAddOrRemoveOneOrChangeItsStartMidRunButItsWidthAndBitsMayChange) {
  nlohmann::json j = {{"task", "fashion_mnist"},
                      {"pipeline", {{"stages", 2}}},
                      {"compression", {{"forward", {{"method", "bottleneck"}, {"code_width", 4}}}}}};
  Session session(Config::fromJson(j), nullptr);
  const std::vector<std::pair<Command, std::string>> refused{
      {Command::set("compression.forward.code_init", "pca"), "code_init"},
      {Command::set("compression.forward.method", "topk"), "remove the one at boundary 0"}};
  for (const auto& [command, why] : refused) {
    try {
      Session(session.config(), nullptr).post(command);
      ADD_FAILURE() << command.key << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("start a new run"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(session.post(Command::set("compression.forward.value_bits", 8)));
  EXPECT_NO_THROW(session.post(Command::set("compression.forward.code_width", 8)));
  nlohmann::json plain = j;
  plain.erase("compression");
  try {
    Session(Config::fromJson(plain), nullptr).post(Command::set("compression.forward.method", "bottleneck"));
    ADD_FAILURE() << "a bottleneck was added mid-run";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("add one at boundary 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ps
