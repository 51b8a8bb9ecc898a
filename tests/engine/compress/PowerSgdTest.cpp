// PowerSGD: a rank-r approximation by one warm-started power-iteration step per message.
#include "engine/compress/Codec.h"
#include "engine/compress/Compensation.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/runs/config/Config.h"
#include "engine/errors/ConfigError.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>

namespace ps {
namespace {

CompressionOptions powerSgd(int rank, int minSize = 1024) {
  CompressionOptions o;
  o.method = "powersgd";
  o.extra["rank"] = rank;
  o.extra["min_size"] = minSize;
  return o;
}

double relError(const torch::Tensor& y, const torch::Tensor& x) { return ((y - x).norm() / x.norm()).item<double>(); }

torch::Tensor roundTrip(Codec& c, const torch::Tensor& x) { return c.decode(c.encode(x), torch::kCPU); }

TEST(PowerSgd, IsExactForAMatrixOfRankAtMostR) {
  torch::manual_seed(1);
  for (int rank : {1, 3, 4}) {
    auto m = torch::mm(torch::randn({64, rank}), torch::randn({rank, 80}));
    auto codec = makeCodec(powerSgd(4));
    EXPECT_LT(relError(roundTrip(*codec, m), m), 1e-5) << "rank " << rank;
  }
  // A 4-d activation is a matrix of its first dimension by the rest.
  auto act = torch::mm(torch::randn({16, 2}), torch::randn({2, 8 * 7 * 7})).view({16, 8, 7, 7});
  auto y = roundTrip(*makeCodec(powerSgd(2)), act);
  EXPECT_EQ(y.sizes(), act.sizes());
  EXPECT_LT(relError(y, act), 1e-5);
}

TEST(PowerSgd, TheErrorShrinksOverStepsTowardTheBestRankRApproximation) {
  torch::manual_seed(2);
  // A matrix with a decaying spectrum, as gradients have.
  auto u = std::get<0>(torch::linalg_qr(torch::randn({96, 96})));
  auto v = std::get<0>(torch::linalg_qr(torch::randn({120, 96})));
  auto s = torch::pow(0.8, torch::arange(96, torch::kFloat32));
  auto m = torch::mm(u * s, v.t());
  const int r = 4;
  // The truncated SVD's error: the singular values left out, over all of them.
  const double best = (s.slice(0, r, 96).square().sum() / s.square().sum()).sqrt().item<double>();
  auto codec = makeCodec(powerSgd(r));
  std::vector<double> errors;
  for (int step = 0; step < 30; ++step) errors.push_back(relError(roundTrip(*codec, m), m));
  EXPECT_GT(errors.front(), 1.05 * best);        // a random start is far from the best subspace
  EXPECT_LT(errors.back(), errors.front());      // the warm start carries the subspace from message to message
  EXPECT_NEAR(errors.back(), best, 0.01 * best);  // and converges to the truncated SVD's error
  for (size_t i = 1; i < errors.size(); ++i) EXPECT_LE(errors[i], errors[i - 1] * 1.001) << "step " << i;
}

TEST(PowerSgd, BothEndsAgreeOverManyStepsAndTheReceiverKeepsNothingThatCouldDrift) {
  torch::manual_seed(3);
  CodecContext c;
  c.seed = 7;
  c.boundary = 1;
  auto a = makeCodec(powerSgd(3), c), b = makeCodec(powerSgd(3), c);  // two replicas' senders, say
  auto longLived = makeCodec(powerSgd(3), c);
  for (int step = 0; step < 40; ++step) {
    auto x = torch::randn({32, 48}) + 0.5 * float(step % 5);
    const Payload pa = a->encode(x), pb = b->encode(x);
    ASSERT_EQ(pa.bytes, pb.bytes) << "step " << step;  // the same seeded start and the same state, byte for byte
    auto y = longLived->decode(pa, torch::kCPU);
    EXPECT_TRUE(torch::equal(y, makeCodec(powerSgd(3), c)->decode(pa, torch::kCPU))) << "step " << step;
    EXPECT_EQ(pa.values, uint64_t(3 * (32 + 48)));
  }
}

TEST(PowerSgd, SmallTensorsAndThoseItCannotShrinkTravelDense) {
  torch::manual_seed(4);
  for (auto x : {torch::randn({10, 10}), torch::randn({5000}), torch::randn({4, 300})}) {
    auto codec = makeCodec(powerSgd(4));
    const Payload p = codec->encode(x);
    auto y = codec->decode(p, torch::kCPU);
    EXPECT_TRUE(torch::equal(y, x)) << x.sizes();
    EXPECT_EQ(p.size(), 8 + 8 * size_t(x.dim()) + 1 + 4 * size_t(x.numel())) << x.sizes();
  }
  // Rank 4 of a 4 x 300 matrix would cost 4 * 304 values, more than its 1200: dense; rank 1 pays.
  auto thin = torch::randn({4, 300});
  EXPECT_LT(makeCodec(powerSgd(1, 0))->encode(thin).size(), size_t(4 * 1200));
}

TEST(PowerSgd, MalformedPayloadsAreRejected) {
  torch::manual_seed(5);
  auto codec = makeCodec(powerSgd(4));
  const Payload good = codec->encode(torch::randn({64, 80}));
  const size_t body = 8 + 8 * 2;
  auto bad = [&](auto edit) {
    Payload p = good;
    edit(p.bytes);
    return p;
  };
  EXPECT_THROW(codec->decode(bad([](auto& b) { b.pop_back(); }), torch::kCPU), PayloadError);
  EXPECT_THROW(codec->decode(bad([](auto& b) { b.push_back(0); }), torch::kCPU), PayloadError);
  EXPECT_THROW(codec->decode(bad([&](auto& b) { b[body] = 65; }), torch::kCPU), PayloadError);  // rank > 64
  EXPECT_THROW(codec->decode(bad([&](auto& b) { b[body] = 50; }), torch::kCPU), PayloadError);  // no saving
  EXPECT_THROW(codec->decode(bad([&](auto& b) { b[body] = 3; }), torch::kCPU), PayloadError);   // sizes differ
  EXPECT_THROW(codec->decode(bad([&](auto& b) {
                 const float nan = std::nanf("");
                 std::memcpy(b.data() + body + 1 + 4 * 17, &nan, 4);
               }),
               torch::kCPU),
               PayloadError);
  EXPECT_THROW(codec->decode(bad([&](auto& b) { b.resize(body + 1); }), torch::kCPU), PayloadError);
}

TEST(PowerSgd, ErrorFeedbackFromTheCompensationCarriesWhatOneMessageLeavesOut) {
  torch::manual_seed(6);
  auto x = torch::randn({48, 64});  // full rank: rank 2 leaves most of it out of each message
  CompressionOptions o = powerSgd(2);
  o.feedback = "ef";
  Compensator sender(o, {}, {}), receiver(o, {}, {});
  auto sum = torch::zeros_like(x);
  const int steps = 200;
  double single = 0;
  for (int t = 0; t < steps; ++t) {
    SendReport report;
    auto used = receiver.receive(sender.send(x, {}, report), torch::kCPU, {});
    if (t == 0) single = relError(used, x);
    sum += used;
  }
  EXPECT_GT(single, 0.5);
  EXPECT_LT(relError(sum / steps, x), 0.1 * single);  // the residual is sent later instead of lost
}

TEST(PowerSgd, IsConfiguredLikeAnyCodecAndItsRankIsChecked) {
  const MethodSpec* spec = catalogue::codec("powersgd");
  ASSERT_TRUE(spec);
  EXPECT_TRUE(spec->reads("rank"));
  EXPECT_EQ(catalogue::option("rank")->control, OptionSpec::Control::Slider);
  nlohmann::json j = {{"compression", {{"gradients", {{"method", "powersgd"}, {"rank", 8}, {"feedback", "ef"}}}}}};
  const Config c = Config::fromJson(j, "test");
  EXPECT_EQ(c.compression.gradients.value("rank"), 8);
  EXPECT_EQ(c.compression.gradients.value("min_size"), 1024);
  EXPECT_EQ(c.compression.forward.value("rank"), 4);
  j["compression"]["gradients"]["rank"] = 65;
  try {
    Config::fromJson(j, "test");
    FAIL() << "rank 65 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("compression.gradients.rank"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ps
