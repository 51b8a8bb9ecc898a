#include "engine/pipeline/Schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace ps {
namespace {

using Op = PipelineOp;

// Every micro-batch runs forward once and backward once, forward first; backwards in order.
void expectComplete(const std::vector<Op>& ops, int m) {
  ASSERT_EQ(ops.size(), size_t(2 * m));
  std::vector<int> fwdAt(m, -1), bwdAt(m, -1);
  for (size_t i = 0; i < ops.size(); ++i) (ops[i].kind == Op::Forward ? fwdAt : bwdAt)[size_t(ops[i].microbatch)] = int(i);
  for (int k = 0; k < m; ++k) {
    EXPECT_GE(fwdAt[size_t(k)], 0);
    EXPECT_GT(bwdAt[size_t(k)], fwdAt[size_t(k)]);
    if (k > 0) EXPECT_GT(bwdAt[size_t(k)], bwdAt[size_t(k) - 1]);
  }
}

// Largest number of micro-batches whose activations are alive at once.
int peakInFlight(const std::vector<Op>& ops) {
  int alive = 0, peak = 0;
  for (const auto& op : ops) peak = std::max(peak, alive += op.kind == Op::Forward ? 1 : -1);
  return peak;
}

TEST(Schedule, GPipeRunsAllForwardsThenAllBackwards) {
  GPipeSchedule g;
  auto ops = g.ops(1, 4, 3);
  EXPECT_EQ(ops, (std::vector<Op>{{Op::Forward, 0}, {Op::Forward, 1}, {Op::Forward, 2},
                                  {Op::Backward, 0}, {Op::Backward, 1}, {Op::Backward, 2}}));
  for (int s = 0; s < 4; ++s) EXPECT_EQ(peakInFlight(g.ops(s, 4, 8)), 8);
}

TEST(Schedule, OneFOneBWarmsUpThenAlternates) {
  OneFOneBSchedule f;
  // Stage 0 of 4 with 6 micro-batches: 3 warm-up forwards, then F/B pairs, then 3 backwards.
  EXPECT_EQ(f.ops(0, 4, 6), (std::vector<Op>{{Op::Forward, 0}, {Op::Forward, 1}, {Op::Forward, 2},
                                             {Op::Forward, 3}, {Op::Backward, 0}, {Op::Forward, 4},
                                             {Op::Backward, 1}, {Op::Forward, 5}, {Op::Backward, 2},
                                             {Op::Backward, 3}, {Op::Backward, 4}, {Op::Backward, 5}}));
  // The last stage alternates from the start.
  EXPECT_EQ(f.ops(3, 4, 2), (std::vector<Op>{{Op::Forward, 0}, {Op::Backward, 0}, {Op::Forward, 1}, {Op::Backward, 1}}));
}

TEST(Schedule, OneFOneBBoundsActivationMemory) {
  OneFOneBSchedule f;
  for (int stages : {1, 2, 4, 8})
    for (int m : {1, 2, 3, 8, 16})
      for (int s = 0; s < stages; ++s) {
        auto ops = f.ops(s, stages, m);
        expectComplete(ops, m);
        EXPECT_LE(peakInFlight(ops), std::min(m, stages - s)) << "stage " << s << " of " << stages << ", M=" << m;
      }
}

// What a micro-batch holds from its forward to its backward can be shared by micro-batches reuseDistance apart:
// under 1F1B as many as can be in flight on the stage, under GPipe none.
TEST(Schedule, ReuseDistanceIsHowFarApartMicroBatchesCanShare) {
  OneFOneBSchedule f;
  GPipeSchedule g;
  for (int stages : {1, 2, 4, 8})
    for (int m : {1, 2, 3, 8, 16})
      for (int s = 0; s < stages; ++s) {
        SCOPED_TRACE("stage " + std::to_string(s) + " of " + std::to_string(stages) + ", M=" + std::to_string(m));
        const auto ops = f.ops(s, stages, m);
        const int d = reuseDistance(ops);
        EXPECT_EQ(d, std::min(m, stages - s));
        EXPECT_EQ(d, peakInFlight(ops));
        EXPECT_EQ(reuseDistance(g.ops(s, stages, m)), m);
      }
  // Out of order: micro-batch 1's backward comes after micro-batch 2's forward, so neighbours cannot share.
  EXPECT_EQ(reuseDistance({{Op::Forward, 0},
                           {Op::Backward, 0},
                           {Op::Forward, 1},
                           {Op::Forward, 2},
                           {Op::Backward, 1},
                           {Op::Backward, 2}}),
            2);
  // A micro-batch whose backward never comes holds on to the end.
  EXPECT_EQ(reuseDistance({{Op::Forward, 0}, {Op::Forward, 1}, {Op::Backward, 1}}), 2);
  EXPECT_EQ(reuseDistance({}), 0);
}

TEST(Schedule, EveryScheduleIsComplete) {
  for (const std::string name : {"gpipe", "1f1b"}) {
    auto schedule = makeSchedule(name);
    EXPECT_EQ(schedule->name(), name);
    for (int m : {1, 5}) expectComplete(schedule->ops(0, 3, m), m);
  }
  EXPECT_THROW(makeSchedule("zigzag"), std::invalid_argument);
}

}  // namespace
}  // namespace ps
