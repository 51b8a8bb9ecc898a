// Where a curve of evaluations first reaches a target, and measures read there by linear interpolation.
#include "engine/runs/store/Reach.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

struct Eval {
  double step, seconds, accuracy;
};
const auto accuracy = [](const Eval& e) { return e.accuracy; };
const auto seconds = [](const Eval& e) { return e.seconds; };

TEST(Reach, FallsBetweenTheEvaluationsAroundTheTarget) {
  const std::vector<Eval> curve = {{100, 10, 0.5}, {200, 30, 0.7}, {300, 50, 0.9}, {400, 70, 0.8}};
  const auto r = reach(curve, 0.8, true, accuracy);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->before, &curve[1]);
  EXPECT_EQ(r->at, &curve[2]);
  EXPECT_DOUBLE_EQ(r->fraction, 0.5);
  EXPECT_DOUBLE_EQ(r->read(seconds), 40);
  EXPECT_DOUBLE_EQ(r->read([](const Eval& e) { return e.step; }), 250);
  EXPECT_DOUBLE_EQ(reach(curve, 0.7, true, accuracy)->read(seconds), 30) << "exactly at a point";
  EXPECT_DOUBLE_EQ(reach(curve, 0.4, true, accuracy)->read(seconds), 10) << "the first point is already there";
  EXPECT_FALSE(reach(curve, 0.95, true, accuracy));
  EXPECT_FALSE(reach(std::vector<Eval>{}, 0.1, true, accuracy));
}

TEST(Reach, LowerIsBetterForPerplexity) {
  const std::vector<Eval> curve = {{1, 0, 40}, {2, 10, 20}, {3, 20, 10}};
  EXPECT_DOUBLE_EQ(reach(curve, 15, false, accuracy)->read(seconds), 15);
  EXPECT_FALSE(reach(curve, 5, false, accuracy));
}

}  // namespace
}  // namespace ps
