#include "engine/compress/Adaptive.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ps {
namespace {

AdaptOptions gravac(int window = 4) {
  AdaptOptions o;
  o.kind = "gravac";
  o.window = window;
  return o;
}

TEST(Adaptive, GravacCandidatesAreGeometricOrExponentialFromThetaMinToThetaMax) {
  GravacController geometric(gravac());
  ASSERT_EQ(geometric.candidates().size(), 10u);  // 0.1 * 0.5^9 = 1.95e-4 >= 1e-4 > 0.1 * 0.5^10
  EXPECT_DOUBLE_EQ(geometric.candidates()[0], 0.1);
  EXPECT_DOUBLE_EQ(geometric.candidates()[1], 0.05);
  EXPECT_DOUBLE_EQ(geometric.candidates()[9], 0.1 / 512);
  AdaptOptions e = gravac();
  e.exponential = true;
  GravacController exponential(e);  // the step squares: x0.5, x0.25, x0.0625, ...
  ASSERT_EQ(exponential.candidates().size(), 4u);
  EXPECT_DOUBLE_EQ(exponential.candidates()[2], 0.0125);
  EXPECT_DOUBLE_EQ(exponential.candidates()[3], 0.0125 * 0.0625);
}

TEST(Adaptive, GravacSendsThetaMinDuringTheFirstWindowThenExploresAndSettles) {
  GravacController c(gravac(4));
  AdaptObservation o;
  o.gain_min = o.gain_current = 0.95;
  o.samples_per_s = 100;
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(c.observe(o)) << "first window, step " << i;
  EXPECT_DOUBLE_EQ(c.sending(), 0.1);
  // Throughput rises as K falls, with diminishing returns: 0.1 -> 100, 0.05 -> 140, 0.025 -> 160, 0.0125 -> 170,
  // 0.00625 -> 175.
  auto throughput = [](double k) { return 180.0 - 800.0 * k; };
  std::vector<std::string> reasons;
  for (int step = 0; step < 200 && !c.settled(); ++step) {
    o.samples_per_s = throughput(c.exploring());
    if (auto d = c.observe(o)) {
      reasons.push_back(d->reason);
      EXPECT_DOUBLE_EQ(d->k, c.sending());
      EXPECT_FALSE(d->dense);
    }
  }
  ASSERT_TRUE(c.settled());
  // CT(0.0125) and CT(0.025) differ by 6%, CT(0.00625) and CT(0.0125) by 3% (< omega = 5%): it keeps the more
  // compressed of those two, 0.00625.
  EXPECT_DOUBLE_EQ(c.sending(), 0.00625);
  EXPECT_EQ(c.throughputs().size(), 5u);
  ASSERT_GE(reasons.size(), 2u);
  EXPECT_NE(reasons.front().find("explores"), std::string::npos) << reasons.front();
  EXPECT_NE(reasons.back().find("settled"), std::string::npos) << reasons.back();
  // Settled means settled: more steps change nothing.
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(c.observe(o));
}

TEST(Adaptive, GravacFallsBackToThetaMinThenDenseWhenGainsDrop) {
  GravacController c(gravac(2));
  AdaptObservation o;
  o.gain_min = o.gain_current = 0.9;
  o.samples_per_s = 100;
  for (int i = 0; i < 4; ++i) c.observe(o);  // past the first window, exploring 0.05
  ASSERT_DOUBLE_EQ(c.exploring(), 0.05);
  o.gain_current = 0.2;  // the explored factor loses the signal, θ_min still keeps it
  std::optional<AdaptDecision> d;
  // A factor picked for exploration is never sent before it has a measurement: no flip to it and straight back.
  for (int i = 0; i < 200; ++i) {
    c.observe(o);
    EXPECT_DOUBLE_EQ(c.sending(), 0.1) << "step " << i;
  }
  o.gain_min = 0.2;  // neither keeps it
  for (int i = 0; i < 400 && !(d && d->dense); ++i) d = c.observe(o);
  ASSERT_TRUE(d && d->dense) << "GraVAC should send dense when no factor keeps epsilon of the signal";
  EXPECT_DOUBLE_EQ(c.sending(), 1.0);
}

TEST(Adaptive, AccordionIsMildInCriticalPhasesAndAggressiveOtherwise) {
  AdaptOptions a;
  a.kind = "accordion";
  a.window = 5;
  a.alpha = 1;  // the interval's last norm (no smoothing) keeps the test arithmetic plain
  a.theta_min = 0.1;
  a.aggressive = 0.01;
  AccordionController c(a);
  AdaptObservation o;
  o.norm = 10;
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(c.observe(o));  // steady: stays aggressive
  EXPECT_DOUBLE_EQ(c.sending(), 0.01);
  o.norm = 15;  // +50% over an interval: a critical phase
  std::optional<AdaptDecision> d;
  for (int i = 0; i < 5; ++i)
    if (auto x = c.observe(o)) d = x;
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->k, 0.1);
  EXPECT_NE(d->reason.find("critical"), std::string::npos);
  d.reset();
  for (int i = 0; i < 5; ++i)
    if (auto x = c.observe(o)) d = x;  // steady again
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->k, 0.01);
}

}  // namespace
}  // namespace ps
