// The link model's timing functions: the one arithmetic the live links, the gradient exchange and the replay of a
// saved step share (the replay's bit-exactness against recorded runs is in StepTraceTest).
#include "engine/core/LinkModel.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

LinkModel link(double mbps, double ms) {
  LinkModel m;
  m.bandwidth_mbps = mbps;
  m.latency_ms = ms;
  return m;
}

TEST(LinkModel, AMessageOnAFreeWireArrivesAfterItsTransferAndTheLatency) {
  const LinkModel m = link(100, 2);  // 100 Mbit/s: 1 MB in 80 ms
  double wireFree = 0;
  const double arrival = m.queue(1.0, 1000000, wireFree);
  EXPECT_DOUBLE_EQ(wireFree, 1.0 + 0.08);
  EXPECT_DOUBLE_EQ(arrival, 1.0 + 0.08 + 0.002);
  EXPECT_NEAR(arrival - 1.0, m.messageSeconds(1000000), 1e-12);
}

TEST(LinkModel, MessagesQueueForTheWireButTheLatencyOverlapsTheNextTransfer) {
  const LinkModel m = link(100, 10);
  double wireFree = 0;
  const double first = m.queue(0, 1000000, wireFree);   // leaves at 0, wire busy until 0.08
  const double second = m.queue(0, 1000000, wireFree);  // ready at 0, waits for the wire: leaves at 0.08
  EXPECT_DOUBLE_EQ(first, 0.08 + 0.01);
  EXPECT_DOUBLE_EQ(second, 0.16 + 0.01);  // not 0.18: the first's latency does not hold the wire
  const double late = m.queue(1.0, 0, wireFree);  // ready after the wire is free again: leaves at once
  EXPECT_DOUBLE_EQ(late, 1.0 + 0.01);
}

TEST(LinkModel, TcpFramingAddsHeadersPerSegment) {
  LinkModel m = link(1000, 0);
  EXPECT_EQ(m.wireBytes(1448), 1448u);
  m.tcp = true;
  EXPECT_EQ(m.wireBytes(1), 1u + 66u);
  EXPECT_EQ(m.wireBytes(1448), 1448u + 66u);
  EXPECT_EQ(m.wireBytes(1449), 1449u + 2 * 66u);
}

TEST(LinkModel, ARingAllReduceSendsTwiceTheShareOfEveryReplicaButOne) {
  const LinkModel m = link(80, 1);  // 10 MB/s
  // 4 replicas, 1M float32 values (4 MB): 2 * 3 rounds of 1 MB plus a latency each.
  EXPECT_DOUBLE_EQ(m.ringAllReduceSeconds(1000000, 4), 6 * (0.001 + 0.1));
  EXPECT_DOUBLE_EQ(m.ringAllReduceSeconds(1000000, 1), 0.0);  // alone: nothing crosses
}

TEST(LinkModel, AnAllGatherTakesOneRoundOfTheLargestMessagePerOtherReplica) {
  const LinkModel m = link(80, 1);
  EXPECT_DOUBLE_EQ(m.allGatherSeconds(500000, 3), 2 * m.messageSeconds(500000));
  EXPECT_DOUBLE_EQ(m.allGatherSeconds(500000, 1), 0.0);
}

}  // namespace
}  // namespace ps
