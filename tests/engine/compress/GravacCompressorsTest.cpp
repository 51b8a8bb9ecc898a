#include "engine/compress/GravacCompressors.h"

#include "engine/compress/ControllerList.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ps {
namespace {

CompressionOptions topk() {
  CompressionOptions o;
  o.method = "topk";
  o.feedback = "ef";
  o.adapt = "gravac";
  o.theta_min = 0.1;
  return o;
}

double l2(const torch::Tensor& t) {
  return t.norm().item<double>();
}

TEST(GravacCompressors, SendsThetaMinFirstAndMeasuresBothCompressorsOnTheirOwnResiduals) {
  GravacCompressors g(topk(), {});
  Compensator receiver(topk(), {}, {});
  torch::manual_seed(3);
  const auto x = torch::randn({1000});
  SendReport r;
  const auto p = g.send(x, {}, r);
  EXPECT_EQ(p.values, 100u);  // θ_min = 10% of 1000
  const auto used = receiver.receive(p, torch::kCPU, {});
  LinkTraffic t;
  g.report(t);
  // Gains as defined: |D(C(p))| of each compressor against |g|, the tensor before any residual.
  EXPECT_NEAR(t.measures.at(adapt_measure::kGravacRaw), l2(x), 1e-4);
  EXPECT_NEAR(t.measures.at(adapt_measure::kGravacMin), l2(used), 1e-4);
  EXPECT_NEAR(t.measures.at(adapt_measure::kGravacCurrent), l2(used), 1e-4);  // the current compressor starts at θ_min too
  EXPECT_NEAR(r.err_num, std::pow(l2(used - x), 2), 1e-3);
  g.report(t);
  EXPECT_NEAR(t.measures.at(adapt_measure::kGravacRaw), l2(x), 1e-4) << "report() starts the sums over";
}

TEST(GravacCompressors, ASwitchOfFactorKeepsTheCurrentResidualAndThetaMinsResidual) {
  GravacCompressors g(topk(), {});
  Compensator receiver(topk(), {}, {});
  torch::manual_seed(4);
  const auto x = torch::randn({1000});
  SendReport r;
  g.send(x, {}, r);  // both residuals now hold the 900 values not sent
  g.select(GravacSend::Current, 0.05);
  const auto zero = torch::zeros({1000});
  auto p = g.send(zero, {}, r);
  EXPECT_EQ(p.values, 50u);
  auto sent = receiver.receive(p, torch::kCPU, {});
  // With nothing new to send, what goes out is the residual the switch carried over: the 50 largest of it.
  EXPECT_GT(l2(sent), 0.0) << "a switch of factor dropped the current compressor's residual";
  const auto residual = torch::where(x.abs() >= std::get<0>(x.abs().topk(100)).min(), torch::zeros_like(x), x);
  EXPECT_NEAR(l2(sent), l2(std::get<0>(residual.abs().topk(50))), 1e-4);
  // θ_min's residual was never dropped either. Both compress every message, the one not sent included, so at the
  // zero message θ_min's took out the 100 largest of its residual, and now it sends the next 100.
  g.select(GravacSend::ThetaMin, 0.05);
  p = g.send(zero, {}, r);
  EXPECT_EQ(p.values, 100u);
  const auto ranked = std::get<0>(residual.abs().sort(0, true));
  EXPECT_NEAR(l2(receiver.receive(p, torch::kCPU, {})), l2(ranked.slice(0, 100, 200)), 1e-4);
}

TEST(GravacCompressors, DenseSendsTheTensorItselfAndAnyReceiverDecodesIt) {
  GravacCompressors g(topk(), {});
  g.select(GravacSend::Dense, 0.05);
  EXPECT_DOUBLE_EQ(g.sentK(), 1.0);
  CompressionOptions plain = topk();
  plain.feedback = "none";
  Compensator receiver(plain, {}, {});
  const auto x = torch::randn({7, 9});
  SendReport r;
  const auto p = g.send(x, {}, r);
  EXPECT_TRUE(torch::equal(receiver.receive(p, torch::kCPU, {}), x));
  EXPECT_DOUBLE_EQ(r.err_num, 0.0);
  EXPECT_EQ(r.values, 63u);
  LinkTraffic t;
  g.report(t);
  EXPECT_GT(t.measures.at(adapt_measure::kGravacMin), 0.0) << "both compressors keep measuring while dense is sent";
}

// Links and exchanges ask the registry for a sender: a controller's entry makes one exactly when its spec says it
// keeps compressors of its own, and GraVAC's is the pair above, sending θ_min first.
TEST(GravacCompressors, TheControllerEntryMakesTheSenderWhereTheSpecSaysItHasCompressors) {
  int withCompressors = 0;
  ControllerList::any([&](auto entry) {
    using Entry = decltype(entry);
    CompressionOptions o = topk();
    o.adapt = Entry::spec().name;
    const auto sender = makeAdaptiveSender(o, {});
    EXPECT_EQ(sender != nullptr, Entry::spec().ownCompressors) << Entry::spec().name;
    withCompressors += sender != nullptr;
    return false;
  });
  EXPECT_EQ(withCompressors, 1);
  const auto gravac = makeAdaptiveSender(topk(), {});
  ASSERT_NE(dynamic_cast<GravacCompressors*>(gravac.get()), nullptr);
  EXPECT_DOUBLE_EQ(gravac->sentK(), 0.1);
  AdaptDecision d;
  d.send = GravacSend::Current;
  d.explore = 0.02;
  gravac->apply(d);
  EXPECT_DOUBLE_EQ(gravac->sentK(), 0.02);
  EXPECT_EQ(gravac->describe(), "topk 2% + ef (GraVAC)");
}

}  // namespace
}  // namespace ps
