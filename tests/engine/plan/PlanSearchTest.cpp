// The planner's cost model and search (engine/plan/PlanSearch.h) on steps built by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "engine/plan/PlanSearch.h"
#include "tests/engine/core/PipelineTraces.h"

namespace ps::plan {
namespace {

using test::pipelineTrace;
using test::Shape;

// A 4-stage step of float32 messages (no codec): 8 micro-batches of 1 MB activations and gradients.
StepTrace profiledStep(bool oneFOneB) {
  Shape s;
  s.oneFOneB = oneFOneB;
  s.bytes = s.dense = 1 << 20;
  s.forward = 0.004, s.backward = 0.008, s.update = 0.002;
  return pipelineTrace(s);
}

Option dense() {
  return {"none", {0, 0, double(1 << 20)}, 1, 0};
}
Option int8() {
  return {"quantize bits=8", {0.0004, 0.0002, double(1 << 18)}, 1, 0.25};
}
Option topk() {
  return {"topk k=0.05 ef", {0.002, 0.0005, double(1 << 20) / 10}, 1.25, 0.75};
}

Problem problemAt(double mbps, bool oneFOneB = false) {
  Problem p;
  p.profiled = profiledStep(oneFOneB);
  p.network = LinkModel{mbps, 0.5};
  p.directions = directionsOf(p.profiled);
  p.options.assign(p.directions.size(), {dense(), int8(), topk()});
  return p;
}

TEST(PlanSearch, TheStepsOwnCostsGiveItsOwnTimeToTheBit) {
  const StepTrace step = profiledStep(true);
  const auto costs = meanMessageCosts(step);
  ASSERT_EQ(costs.size(), 6u);  // three boundaries, both ways
  EXPECT_EQ(costs.begin()->first, (LinkDirection{0, true}));
  EXPECT_EQ(costs.begin()->second.bytes, double(1 << 20));
  for (double mbps : {10.0, 100.0, 10000.0}) {
    const LinkModel network{mbps, 1};
    EXPECT_EQ(replay(withMessageCosts(step, costs), network), replay(step, network)) << mbps;
    Problem p = problemAt(mbps, true);
    p.network = network;
    const Plan asRun = evaluate(p, std::vector<size_t>(p.directions.size(), 0));  // float32 everywhere
    EXPECT_EQ(asRun.step_s, replay(step, network)) << mbps;
    EXPECT_TRUE(asRun.feasible);
  }
}

TEST(PlanSearch, ACheaperDirectionShortensTheStepOnlyWhereItsLinkMatters) {
  Problem p = problemAt(100);
  const Plan all = evaluate(p, std::vector<size_t>(6, 0));
  auto oneCompressed = std::vector<size_t>(6, 0);
  oneCompressed[0] = 1;  // boundary 0 forward in int8
  const Plan one = evaluate(p, oneCompressed);
  EXPECT_LT(one.step_s, all.step_s);
  EXPECT_DOUBLE_EQ(one.accuracy_cost, 0.25);
  EXPECT_EQ(one.steps_factor, 1);
  auto everywhere = std::vector<size_t>(6, 1);
  EXPECT_LT(evaluate(p, everywhere).step_s, one.step_s);
  everywhere[5] = 2;
  const Plan mixed = evaluate(p, everywhere);
  EXPECT_DOUBLE_EQ(mixed.steps_factor, 1.25) << "the slowest-converging choice sets the steps";
  EXPECT_DOUBLE_EQ(mixed.accuracy_cost, 5 * 0.25 + 0.75) << "accuracy costs add up";
  EXPECT_FALSE(mixed.feasible) << "over the 1-point budget";
}

// A plan is held against the best setting used everywhere: only settings every direction offers, matched by name.
TEST(PlanSearch, TheBestUniformSettingIsOneEveryDirectionOffers) {
  Problem p = problemAt(10);
  p.options[3] = {topk(), dense()};  // int8 missing on one direction; the others in another order there
  const auto uniform = uniformChoices(p);
  ASSERT_EQ(uniform.size(), 2u);
  EXPECT_EQ(uniform[0], (std::vector<size_t>{0, 0, 0, 1, 0, 0})) << "dense, found at its place in each direction";
  EXPECT_EQ(uniform[1], (std::vector<size_t>{2, 2, 2, 0, 2, 2}));
  p.accuracy_budget = 10;
  const auto best = bestUniform(p);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->choice, uniform[1]) << "TopK everywhere is fastest at 10 Mbit/s";
  EXPECT_LT(best->time_factor(), evaluate(p, uniform[0]).time_factor());
  p.accuracy_budget = 1;  // 6 x 0.75 points: TopK everywhere is over it, dense is what is left
  EXPECT_EQ(bestUniform(p)->choice, uniform[0]);
  p.options[3] = {topk()};
  p.options[4] = {dense()};
  EXPECT_TRUE(uniformChoices(p).empty());
  EXPECT_FALSE(bestUniform(p));
}

// Every assignment of 3 options to 6 directions (729), enumerated here by hand: the exhaustive search returns the
// best feasible one, and branch and bound finds the same time with fewer replays.
TEST(PlanSearch, TheSearchesReturnTheOptimumOfEveryAssignment) {
  for (double mbps : {10.0, 100.0, 1000.0, 100000.0})
    for (double budget : {0.0, 0.5, 1.0, 3.0}) {
      Problem p = problemAt(mbps);
      p.accuracy_budget = budget;
      double bestTime = INFINITY;
      std::vector<size_t> c(6, 0);
      for (int code = 0; code < 729; ++code) {
        for (int d = 0, v = code; d < 6; ++d, v /= 3) c[size_t(d)] = size_t(v % 3);
        const Plan x = evaluate(p, c);
        if (x.feasible) bestTime = std::min(bestTime, x.time_factor());
      }
      const Plan exhaustive = searchExhaustive(p);
      EXPECT_EQ(exhaustive.evaluated, 729u);
      EXPECT_TRUE(exhaustive.feasible);
      EXPECT_NEAR(exhaustive.time_factor(), bestTime, 1e-12 * bestTime) << mbps << " Mbit/s, budget " << budget;
      const Plan bounded = search(p);
      EXPECT_TRUE(bounded.feasible);
      EXPECT_TRUE(bounded.optimal);
      EXPECT_LE(bounded.accuracy_cost, budget + 1e-12);
      EXPECT_NEAR(bounded.time_factor(), bestTime, 1e-12 * bestTime) << mbps << " Mbit/s, budget " << budget;
      EXPECT_LT(bounded.evaluated, 729u) << mbps << " Mbit/s, budget " << budget;
    }
}

// Random problems: 6 directions with 6 options each of random costs, steps factors and accuracy costs (46,656
// assignments), on networks from link-bound to compute-bound. Branch and bound agrees with enumeration on every one.
TEST(PlanSearch, BranchAndBoundFindsTheOptimumOfRandomProblems) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> unit(0, 1);
  size_t replays = 0, enumerated = 0;
  for (int trial = 0; trial < 12; ++trial) {
    Problem p = problemAt(std::pow(10.0, 1 + unit(random) * 4), trial % 2 == 1);
    p.accuracy_budget = 2 * unit(random);
    for (auto& options : p.options) {
      options = {dense()};
      for (int i = 1; i < 6; ++i) {
        const double keep = std::pow(10.0, -2 * unit(random));  // the share of bytes left: 1% to all
        options.push_back({"codec " + std::to_string(i),
                           {0.003 * unit(random), 0.001 * unit(random), keep * double(1 << 20)},
                           1 + 0.5 * unit(random) * (1 - keep),
                           unit(random) * (1 - keep),
                           trial % 3 == 0 ? 0 : 0.1 * unit(random) * (1 - keep)});
      }
    }
    p.tie_tolerance = trial % 3 == 2 ? 0.1 * unit(random) : 0;  // ties go to the least risk within it
    const Plan all = searchExhaustive(p), bounded = search(p);
    EXPECT_TRUE(bounded.optimal);
    EXPECT_NEAR(bounded.time_factor(), all.time_factor(), 1e-12 * all.time_factor()) << "trial " << trial;
    EXPECT_NEAR(bounded.risk, all.risk, 1e-12) << "trial " << trial;
    EXPECT_NEAR(bounded.fastest, all.fastest, 1e-12 * all.fastest) << "trial " << trial;
    EXPECT_LE(bounded.time_factor(), bounded.fastest * (1 + p.tie_tolerance) * (1 + 1e-12)) << "trial " << trial;
    EXPECT_LE(bounded.accuracy_cost, p.accuracy_budget + 1e-12);
    replays += bounded.evaluated, enumerated += all.evaluated;
  }
  EXPECT_LT(replays, enumerated / 4) << "bounding should spare most replays";
}

// A replay limit stops the search with the best plan it has, said to be no proof.
TEST(PlanSearch, ALimitedSearchSaysItsPlanIsNotProved) {
  Problem p = problemAt(10);
  p.accuracy_budget = 3;
  const Plan limited = search(p, 20);
  EXPECT_TRUE(limited.feasible);
  EXPECT_FALSE(limited.optimal);
  EXPECT_LE(limited.evaluated, 20u);
  EXPECT_GE(limited.time_factor(), searchExhaustive(p).time_factor() * (1 - 1e-12));
}

// A setting only its error speaks for, predicted a hair faster than one with less error, is a tie the cost model
// cannot decide: within the tolerance the plan takes the choices resting least on error alone; a real gain (beyond the
// tolerance) still wins. Both searches agree.
TEST(PlanSearch, WithinTheToleranceThePlanRestingLeastOnErrorWins) {
  Problem p = problemAt(10);
  p.accuracy_budget = 3;
  Option careful = int8(), bold = int8();
  careful.risk = 0.004;
  bold.setting = "topk k=0.2", bold.cost.bytes *= 0.95, bold.risk = 0.08;  // slightly smaller, far less certain
  for (auto& o : p.options) o = {dense(), careful};
  p.options[0].push_back(bold);
  const Plan fastest = search(p);
  ASSERT_EQ(fastest.choice[0], 2u) << "without a tolerance the smaller message wins";
  const Plan everywhere = evaluate(p, std::vector<size_t>(6, 1));
  ASSERT_LT(fastest.time_factor(), everywhere.time_factor());
  ASSERT_GT(fastest.time_factor(), everywhere.time_factor() * 0.97) << "the gain must be inside the tolerance";
  p.tie_tolerance = 0.03;
  for (const Plan& tied : {search(p), searchExhaustive(p)}) {
    EXPECT_EQ(tied.choice, std::vector<size_t>(6, 1)) << "the careful setting everywhere";
    EXPECT_NEAR(tied.risk, 6 * 0.004, 1e-12);
    EXPECT_NEAR(tied.fastest, fastest.time_factor(), 1e-12) << "the plan says what the fastest was";
  }
  EXPECT_TRUE(search(p).optimal);
  p.options[0][2].cost.bytes = double(1 << 20) / 40;  // now a tenth of int8's bytes: a gain the model can see
  const Plan gain = search(p);
  EXPECT_EQ(gain.choice[0], 2u);
  EXPECT_EQ(gain.fastest, gain.time_factor());
  EXPECT_EQ(searchExhaustive(p).choice, gain.choice);
}

TEST(PlanSearch, ASlowLinkBuysCompressionAndAFastOneKeepsFloat32) {
  Problem slow = problemAt(10);
  slow.accuracy_budget = 3;
  for (size_t i : search(slow).choice) EXPECT_NE(i, 0u) << "at 10 Mbit/s every direction compresses";
  Problem fast = problemAt(100000);
  fast.accuracy_budget = 3;
  for (size_t i : search(fast).choice) EXPECT_EQ(i, 0u) << "at 100 Gbit/s no codec pays for itself";
  Problem strict = problemAt(10);
  strict.accuracy_budget = 0;
  for (size_t i : searchExhaustive(strict).choice) EXPECT_EQ(i, 0u) << "a zero budget leaves only float32";
}

TEST(PlanSearch, BadProblemsAreRefusedNamingWhatIsWrong) {
  auto refused = [](const Problem& p, const std::string& what) {
    try {
      (void)searchExhaustive(p);
      ADD_FAILURE() << "accepted; expected: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Problem p = problemAt(100);
  p.options.pop_back();
  refused(p, "options are given for 5 link directions, not the 6 planned");
  p = problemAt(100);
  p.directions.push_back({7, true});
  p.options.push_back({dense()});
  refused(p, "the profiled step sends nothing on boundary 7 fwd");
  p = problemAt(100);
  p.options[2][1].cost.bytes = -1;
  refused(p, "boundary 1 fwd option 'quantize bits=8': times and bytes must be finite and >= 0");
  p = problemAt(100);
  p.options[1].clear();
  refused(p, "boundary 0 bwd has no options");
  p = problemAt(100);
  p.options[0][2].risk = NAN;
  refused(p, "boundary 0 fwd option 'topk k=0.05 ef': the risk must be finite and >= 0");
  p = problemAt(100);
  p.tie_tolerance = 1;
  refused(p, "the tie tolerance must be a fraction in [0, 1)");
  p = problemAt(100);
  for (auto& o : p.options) o = {topk()};
  refused(p, "no assignment stays within the accuracy budget of 1");
}

}  // namespace
}  // namespace ps::plan
