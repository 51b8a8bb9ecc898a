#include "engine/compress/Adaptive.h"
#include "engine/compress/spec/Catalogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace ps {
namespace {

AdaptOptions gravac(int window = 4) {
  AdaptOptions o;
  o.kind = "gravac";
  o.window = window;
  return o;
}

// One step's measurements with constant gains: the raw tensor has norm 1.
AdaptObservation gains(double min, double current, double samplesPerSecond) {
  AdaptObservation o;
  o.measures = {{adapt_measure::kGravacRaw, 1}, {adapt_measure::kGravacMin, min}, {adapt_measure::kGravacCurrent, current}};
  o.samples_per_s = samplesPerSecond;
  return o;
}

// Runs steps whose throughput depends on the factor the controller sends in them.
void run(GravacController& c, int steps, double min, double current, const std::function<double(double)>& throughput,
         std::vector<std::string>* reasons = nullptr) {
  for (int i = 0; i < steps && !c.settled(); ++i)
    if (auto d = c.observe(gains(min, current, throughput(c.sending())))) {
      EXPECT_DOUBLE_EQ(d->k, c.sending());
      if (reasons) reasons->push_back(d->reason);
    }
}

TEST(Adaptive, EveryRegisteredControllerIsBuiltFromItsNameAndNoneBuildsNothing) {
  for (const auto& spec : catalogue::controllers()) {
    AdaptOptions o;
    o.kind = spec.name;
    const auto controller = makeController(o);
    EXPECT_EQ(controller == nullptr, spec.name == "none") << spec.name;
  }
  AdaptOptions o;
  o.kind = "gravac";
  o.theta_min = 0.2;
  const auto gravac = makeController(o);
  ASSERT_TRUE(gravac);
  const auto start = gravac->start();  // GraVAC sends theta_min while its first window comes in
  ASSERT_TRUE(start);
  EXPECT_EQ(start->k, 0.2);
  EXPECT_EQ(start->send, GravacSend::ThetaMin);
  o.kind = "accordion";
  EXPECT_FALSE(makeController(o)->start()) << "Accordion sends the configured K until it decides otherwise";
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
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(c.observe(gains(0.95, 0.95, 100))) << "first window, step " << i;
  EXPECT_DOUBLE_EQ(c.sending(), 0.1);
  // Throughput rises as the factor sent falls, with diminishing returns: 0.1 -> 100, 0.05 -> 140, 0.025 -> 160,
  // 0.0125 -> 170, 0.00625 -> 175.
  std::vector<std::string> reasons;
  run(
      c, 200, 0.95, 0.95, [](double k) { return 180.0 - 800.0 * k; }, &reasons);
  ASSERT_TRUE(c.settled());
  // CT(0.0125) and CT(0.025) differ by 6% of the second, CT(0.00625) and CT(0.0125) by 3% (< omega = 5%): it keeps
  // the more compressed of those two.
  EXPECT_DOUBLE_EQ(c.exploring(), 0.00625);
  EXPECT_EQ(c.sends(), GravacSend::Current);
  EXPECT_DOUBLE_EQ(c.sending(), 0.00625);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(c.throughputs()[i]) << "candidate " << i;
  EXPECT_NEAR(*c.throughputs()[4], 175 * 0.95, 1e-9);  // its own throughput times its own gain
  ASSERT_GE(reasons.size(), 2u);
  EXPECT_NE(reasons.front().find("explores"), std::string::npos) << reasons.front();
  EXPECT_NE(reasons.back().find("settled"), std::string::npos) << reasons.back();
  // Settled means settled: more steps change nothing.
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(c.observe(gains(0.95, 0.95, 175)));
}

TEST(Adaptive, GravacCreditsAStepsThroughputOnlyToTheFactorSentInIt) {
  AdaptOptions a = gravac(2);
  a.theta_max = 0.05;  // two candidates: 0.1 and 0.05
  GravacController c(a);
  ASSERT_EQ(c.candidates().size(), 2u);
  run(c, 4, 0.9, 0.9, [](double) { return 100.0; });  // the first window, then θ_min's interval
  ASSERT_DOUBLE_EQ(c.exploring(), 0.05);
  // 0.05 keeps too little of the signal, so θ_min is sent all through its interval, and θ_min is fast.
  run(c, 2, 0.9, 0.2, [](double) { return 1000.0; });
  ASSERT_TRUE(c.settled());
  EXPECT_FALSE(c.throughputs()[1]) << "0.05 was never sent: it has no throughput of its own";
  EXPECT_DOUBLE_EQ(c.exploring(), 0.1) << "the only measured factor wins";
  EXPECT_EQ(c.sends(), GravacSend::ThetaMin);
}

TEST(Adaptive, GravacScoresEachFactorWithItsOwnThroughputAndGain) {
  AdaptOptions a = gravac(4);
  a.theta_max = 0.05;
  GravacController c(a);
  auto throughput = [](double k) { return k == 0.1 ? 100.0 : 150.0; };
  run(c, 8, 0.95, 0.95, throughput);  // the first window and θ_min's interval
  ASSERT_DOUBLE_EQ(c.exploring(), 0.05);
  run(c, 4, 0.95, 0.8, throughput);  // 0.05's interval: one step of θ_min while 0.05 gets measured, then 0.05
  ASSERT_TRUE(c.throughputs()[0] && c.throughputs()[1]);
  EXPECT_NEAR(*c.throughputs()[0], 100 * 0.95, 1e-9);
  EXPECT_NEAR(*c.throughputs()[1], 150 * 0.8, 1e-9);
}

TEST(Adaptive, GravacSettlesOnlyWhenTheTwoBestAreWithinOmegaOfTheSecondBest) {
  AdaptOptions a = gravac(4);
  a.theta_max = 0.025;  // three candidates
  GravacController c(a);
  // CT(0.1) = 100 and CT(0.05) = 105.2: 5.2% of the second best apart (but under 5% of the best).
  auto throughput = [](double k) { return k == 0.1 ? 100.0 : k == 0.05 ? 105.2 : 90.0; };
  run(c, 12, 1, 1, throughput);
  ASSERT_TRUE(c.throughputs()[1]);
  EXPECT_FALSE(c.settled());
  EXPECT_DOUBLE_EQ(c.exploring(), 0.025);
}

TEST(Adaptive, GravacGainIsTheRatioOfTwoSeparateAverages) {
  AdaptOptions a = gravac(100);
  a.alpha = 0.5;
  GravacController c(a);
  AdaptObservation o;
  o.measures = {{adapt_measure::kGravacRaw, 2}, {adapt_measure::kGravacMin, 1}, {adapt_measure::kGravacCurrent, 1}};
  c.observe(o);
  o.measures = {{adapt_measure::kGravacRaw, 10}, {adapt_measure::kGravacMin, 3}, {adapt_measure::kGravacCurrent, 9}};
  c.observe(o);
  // EWMA(sent) / EWMA(raw) = (0.5 * 1 + 0.5 * 3) / (0.5 * 2 + 0.5 * 10), not the average of 1/2 and 3/10.
  EXPECT_DOUBLE_EQ(c.gainMin(), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(c.gainCurrent(), 5.0 / 6.0);
}

TEST(Adaptive, GravacFallsBackToThetaMinThenDenseWhenGainsDrop) {
  GravacController c(gravac(2));
  run(c, 4, 0.9, 0.9, [](double) { return 100.0; });  // past the first window, exploring 0.05
  ASSERT_DOUBLE_EQ(c.exploring(), 0.05);
  // The explored factors lose the signal, θ_min still keeps it: θ_min is sent, never a factor that fails.
  for (int i = 0; i < 200; ++i) {
    c.observe(gains(0.9, 0.2, 100));
    EXPECT_DOUBLE_EQ(c.sending(), 0.1) << "step " << i;
  }
  std::optional<AdaptDecision> d;
  for (int i = 0; i < 400 && !(d && d->dense()); ++i) d = c.observe(gains(0.2, 0.2, 100));  // neither keeps it
  ASSERT_TRUE(d && d->dense()) << "GraVAC should send dense when no factor keeps epsilon of the signal";
  EXPECT_DOUBLE_EQ(c.sending(), 1.0);
  EXPECT_EQ(d->send, GravacSend::Dense);
}

TEST(Adaptive, GravacCreditsNoThroughputWithoutAnEmulatedStepTime) {
  // Every rank must decide the same, so only the merged, emulated step time counts; a step without one (0 samples/s)
  // is no measurement, and a factor with no measurement cannot be ranked.
  AdaptOptions a = gravac(2);
  a.theta_max = 0.05;
  GravacController c(a);
  run(c, 20, 0.9, 0.9, [](double) { return 0.0; });
  ASSERT_TRUE(c.settled());
  EXPECT_FALSE(c.throughputs()[0]);
  EXPECT_FALSE(c.throughputs()[1]);
  EXPECT_DOUBLE_EQ(c.exploring(), 0.1);
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
  o.measures[adapt_measure::kSquaredNorm] = 10 * 10;  // a norm of 10
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(c.observe(o));  // steady: stays aggressive
  EXPECT_DOUBLE_EQ(c.sending(), 0.01);
  o.measures[adapt_measure::kSquaredNorm] = 15 * 15;  // +50% over an interval: a critical phase
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
