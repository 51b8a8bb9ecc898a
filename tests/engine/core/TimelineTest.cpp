// A step's timeline (engine/core/Timeline.h): the replay of its trace that keeps every interval, and what the step's
// time was made of.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/core/Timeline.h"
#include "tests/engine/core/PipelineTraces.h"

using namespace ps;
using ps::test::ev;
using ps::test::passes;
using ps::test::pipelineTrace;
using ps::test::Shape;

namespace {

void expectTiled(const Timeline& t) {
  for (const auto& lane : t.lanes) {
    ASSERT_FALSE(lane.bars.empty());
    EXPECT_EQ(lane.bars.front().start, 0.0) << "stage " << lane.stage;
    double sum = 0;
    for (size_t i = 0; i < lane.bars.size(); ++i) {
      if (i) EXPECT_EQ(lane.bars[i].start, lane.bars[i - 1].end) << "stage " << lane.stage << " bar " << i;
      EXPECT_GT(lane.bars[i].end, lane.bars[i].start);
      sum += lane.bars[i].end - lane.bars[i].start;
    }
    EXPECT_EQ(lane.bars.back().end, t.step_s) << "stage " << lane.stage;
    EXPECT_NEAR(sum, t.step_s, 1e-6) << "stage " << lane.stage << ": its bars and idle time are not the step";
  }
}

TEST(Timeline, BarsTileEveryLaneAndTheStepIsTheReplaysToTheBit) {
  for (bool oneFOneB : {false, true}) {
    Shape s;
    s.oneFOneB = oneFOneB;
    s.forward = 0.0013, s.backward = 0.0021, s.encode = 0.0002, s.decode = 0.0001;  // not exact in binary
    s.model = LinkModel{100, 0.5};
    s.bytes = 20000;
    const StepTrace trace = pipelineTrace(s);
    const Timeline t = timelineOf(trace);
    EXPECT_EQ(t.step_s, replay(trace)) << "the timeline is not the replay";
    expectTiled(t);
    EXPECT_EQ(t.stages, 4);
    EXPECT_EQ(t.microbatches, 8);
    ASSERT_EQ(t.messages.size(), size_t(2 * 3 * 8));
    for (const auto& m : t.messages) {
      EXPECT_LE(m.ready, m.leave);
      EXPECT_LT(m.leave, m.wire_end);
      EXPECT_EQ(m.arrival, m.wire_end + 0.0005);
      EXPECT_EQ(t.lanes[m.from].stage, m.forward ? m.boundary : m.boundary + 1);
      EXPECT_EQ(t.lanes[m.to].stage, m.forward ? m.boundary + 1 : m.boundary);
      EXPECT_GE(m.microbatch, 0);
      EXPECT_LT(m.microbatch, 8);
    }
    // Another network: still the replay's time, still tiled.
    const LinkModel fast{10000, 0.01};
    const Timeline other = timelineOf(trace, fast);
    EXPECT_EQ(other.step_s, replay(trace, fast));
    expectTiled(other);
    EXPECT_LT(other.step_s, t.step_s);
  }
}

TEST(Timeline, EqualStagesAtFreeLinksHaveTheSchedulesIdealBubble) {
  for (bool oneFOneB : {false, true}) {
    Shape s;
    s.oneFOneB = oneFOneB;
    s.backward = s.forward;
    const Timeline t = timelineOf(pipelineTrace(s));
    const StepDecomposition d = decompose(t);
    EXPECT_DOUBLE_EQ(d.ideal_bubble, 3.0 / 11);
    EXPECT_NEAR(d.bubble, d.ideal_bubble, 1e-6) << (oneFOneB ? "1f1b" : "gpipe");
    EXPECT_NEAR(d.pipeline_s, 11 * 2 * s.forward, 1e-6);
    // The last stage waits for its first activation three stages deep: an activation wait, not the link's.
    const auto& wait = t.lanes[3].bars.front();
    EXPECT_EQ(wait.kind, TimelineBar::Idle);
    EXPECT_EQ(wait.cause, TimelineBar::Activation);
    EXPECT_EQ(wait.microbatch, 0);
    EXPECT_EQ(t.lanes[3].bars.back().cause, TimelineBar::StepEnd) << "the last stage is done first";
  }
}

// Passes that run late lengthen the recorded bubble; the stages' own bubble (each pass at its stage's mean, free
// links) keeps the schedule's ideal while the stages are equal on average, and names the cost of unequal
// stages when they are not.
TEST(Timeline, TheStagesOwnBubbleTellsUnequalStagesFromLatePassesAndLinks) {
  for (bool oneFOneB : {false, true}) {
    Shape s;
    s.oneFOneB = oneFOneB;
    s.model = LinkModel{100, 0.5};  // slow links besides
    StepTrace jittered = pipelineTrace(s);
    int seen = 0;  // stage 1's first forward runs late, its second as early: the mean stays
    for (auto& e : jittered.lanes[1].events)
      if (e.kind == TraceEvent::Compute && e.role == TraceEvent::Forward && seen < 2)
        e.seconds *= seen++ == 0 ? 1.75 : 0.25;
    const StepDecomposition d = decompose(timelineOf(jittered));
    EXPECT_GT(d.bubble, d.ideal_bubble + 0.05) << (oneFOneB ? "1f1b" : "gpipe");
    EXPECT_NEAR(d.stages_bubble, 3.0 / 11, 1e-6) << (oneFOneB ? "1f1b" : "gpipe");

    StepTrace heavy = pipelineTrace(s);  // the last stage's passes take twice as long
    for (auto& e : heavy.lanes[3].events)
      if (e.kind == TraceEvent::Compute && e.role != TraceEvent::Update) e.seconds *= 2;
    EXPECT_GT(decompose(timelineOf(heavy)).stages_bubble, 3.0 / 11 + 0.1);
    // A reader that never shows it (a trace file) skips the second replay; the timeline is otherwise the same.
    const Timeline without = timelineOf(heavy, heavy.model, {}, /*stagesBubble=*/false);
    EXPECT_EQ(without.stages_bubble, -1);
    EXPECT_EQ(without.step_s, timelineOf(heavy).step_s);
  }
  StepTrace old = pipelineTrace(Shape{});  // traces that do not say which compute was which: unknown
  for (auto& lane : old.lanes)
    for (auto& e : lane.events) e.role = TraceEvent::Unknown;
  EXPECT_FALSE(evenPasses(old));
  EXPECT_EQ(decompose(timelineOf(old)).stages_bubble, -1);
}

TEST(Timeline, ASlowLinkSetsTheCriticalPathAndIsNamed) {
  Shape s;
  s.model = LinkModel{100, 0};
  s.bytes = 125000;  // 10 ms a message at 100 Mbit/s against 1 to 2 ms of compute
  s.dense = 4 * s.bytes;
  const Timeline t = timelineOf(pipelineTrace(s));
  const StepDecomposition d = decompose(t);
  ASSERT_FALSE(d.critical.empty());
  EXPECT_EQ(d.critical.front().stage, -1) << d.critical_summary;
  EXPECT_EQ(d.critical_summary.rfind("link ", 0), 0u) << d.critical_summary;
  double onPath = 0;
  for (const auto& seg : d.critical) onPath += seg.seconds;
  EXPECT_NEAR(onPath, t.step_s, 1e-9) << "the path does not account for the step";
  EXPECT_GT(d.critical_links_share, 0.5);
  bool linkWait = false;
  for (const auto& lane : t.lanes)
    for (const auto& b : lane.bars) linkWait |= b.cause == TimelineBar::Link;
  EXPECT_TRUE(linkWait) << "messages queued behind each other on the wire are waits for the link";
  // At a fast network the stages' compute sets it.
  const StepDecomposition fast = decompose(timelineOf(pipelineTrace(s), LinkModel{1e9, 0}));
  EXPECT_EQ(fast.critical_summary.rfind("stage ", 0), 0u) << fast.critical_summary;
}

TEST(Timeline, EachLinkDirectionsCodecIsWeighedAgainstTheWireItSaved) {
  Shape s;
  s.model = LinkModel{100, 0};
  s.bytes = 1000, s.dense = 4000, s.encode = 1.0 / 4096, s.decode = 1.0 / 8192;
  const Timeline t = timelineOf(pipelineTrace(s));
  const StepDecomposition d = decompose(t);
  ASSERT_EQ(d.links.size(), size_t(2 * 3));
  for (const auto& c : d.links) {
    EXPECT_EQ(c.messages, 8u);
    EXPECT_EQ(c.bytes, 8000u);
    EXPECT_EQ(c.dense, 32000u);
    EXPECT_NEAR(c.codec_s, 8 * (s.encode + s.decode), 1e-12);
    EXPECT_NEAR(c.saved_s, 8 * 8.0 * 3000 / 100e6, 1e-12);  // 1.92 ms saved against 2.9 ms of codec
    EXPECT_TRUE(c.costs_more());
  }
  EXPECT_TRUE(d.links[0].forward);
  EXPECT_FALSE(d.links[1].forward);
  // At a tenth of the bandwidth the same codec pays for itself.
  const StepDecomposition slow = decompose(timelineOf(pipelineTrace(s), LinkModel{10, 0}));
  for (const auto& c : slow.links) EXPECT_FALSE(c.costs_more());
}

TEST(Timeline, ACheaperCodecShortensItsBarsAndTheRecordedOneIsKept) {
  Shape s;
  s.encode = 1.0 / 1024, s.decode = 1.0 / 2048;
  const StepTrace trace = pipelineTrace(s);
  const Timeline recorded = timelineOf(trace);
  const Timeline same = timelineOf(trace, trace.model, CodecScale{1, 1});
  EXPECT_EQ(same.step_s, recorded.step_s);
  const Timeline half = timelineOf(trace, trace.model, CodecScale{0.5, 0.5});
  expectTiled(half);
  EXPECT_LT(half.step_s, recorded.step_s);
  for (const auto& m : half.messages) {
    EXPECT_EQ(m.encode_s, s.encode / 2);
    EXPECT_EQ(m.decode_s, s.decode / 2);
  }
}

TEST(Timeline, AnotherRunsCodecTakesOverEachLinkDirectionItHas) {
  Shape dense;
  dense.model = LinkModel{100, 0};
  dense.bytes = 40000, dense.dense = 40000, dense.encode = 1.0 / 8192, dense.decode = 1.0 / 8192;
  Shape sparse = dense;
  sparse.bytes = 4000, sparse.encode = 1.0 / 1024, sparse.decode = 1.0 / 2048;
  const StepTrace mine = pipelineTrace(dense);
  StepTrace theirs = pipelineTrace(sparse);
  for (auto& lane : theirs.lanes)  // theirs sent nothing backward on link 2: that direction keeps its own codec
    if (lane.stage == 3)
      for (auto& e : lane.events)
        if (e.kind == TraceEvent::SendBackward) e.kind = TraceEvent::Compute, e.bytes = 0;
  for (auto& lane : theirs.lanes)
    if (lane.stage == 2)
      lane.events.erase(std::remove_if(lane.events.begin(), lane.events.end(),
                                       [](const TraceEvent& e) { return e.kind == TraceEvent::ReceiveBackward; }),
                        lane.events.end());
  const Timeline t = timelineOf(withCodecOf(mine, theirs));
  expectTiled(t);
  for (const auto& m : t.messages) {
    const bool kept = !m.forward && m.boundary == 2;
    EXPECT_EQ(m.bytes, kept ? 40000u : 4000u) << m.boundary << (m.forward ? " fwd" : " bwd");
    EXPECT_EQ(m.encode_s, kept ? dense.encode : sparse.encode);
    EXPECT_EQ(m.decode_s, kept ? dense.decode : sparse.decode);
    EXPECT_EQ(m.dense, 40000u) << "the tensors are the same";
  }
  EXPECT_LT(t.step_s, timelineOf(mine).step_s) << "a tenth of the bytes at 100 Mbit/s";
  EXPECT_EQ(timelineOf(withCodecOf(mine, mine)).step_s, timelineOf(mine).step_s);
}

TEST(Timeline, ReplicasWaitForEachOtherAtTheExchangeAndTheSlowerIsOnThePath) {
  StepTrace t;
  t.model = LinkModel{100, 0};
  TraceLane fast{0, 0, {ev(TraceEvent::Compute, 0.25, 0, 0, TraceEvent::Backward)}};
  TraceLane slow{0, 1, {ev(TraceEvent::Compute, 0.5, 0, 0, TraceEvent::Backward)}};
  for (auto* lane : {&fast, &slow}) {
    TraceEvent x = ev(TraceEvent::ExchangeCompressed, 0.125, 1000);
    x.decode = 0.0625;
    lane->events.push_back(x);
    lane->events.push_back(ev(TraceEvent::Compute, 0.125, 0, 0, TraceEvent::Update));
  }
  t.lanes = {fast, slow};
  const Timeline tl = timelineOf(t);
  expectTiled(tl);
  EXPECT_EQ(tl.replicas, 2);
  const auto& bars = tl.lanes[0].bars;  // backward, encode, wait, exchange, update
  ASSERT_EQ(bars.size(), 5u);
  EXPECT_EQ(bars[2].cause, TimelineBar::Replicas);
  EXPECT_EQ(bars[2].end - bars[2].start, 0.25);
  EXPECT_EQ(bars[3].kind, TimelineBar::Exchange);
  const StepDecomposition d = decompose(tl);
  ASSERT_FALSE(d.critical.empty());
  EXPECT_EQ(d.critical.front().what, "stage 0 (replica 1)") << d.critical_summary;
}

TEST(Timeline, RolesAndFloat32SizesAreStoredAndOlderTracesStillGiveATimeline) {
  Shape s;
  StepTrace trace = pipelineTrace(s);
  double at = 0;
  for (auto& e : trace.lanes[1].events) e.wall = at, at += 0.0015;  // where stage 1 really ran them
  const StepTrace back = decodeTrace(encodeTrace(trace));
  EXPECT_EQ(back.lanes[0].events[0].wall, -1) << "not recorded stays unknown";
  EXPECT_NEAR(back.lanes[1].events[3].wall, 0.0045, 1e-9) << "kept to the microsecond";
  const Timeline withWall = timelineOf(back);
  EXPECT_TRUE(withWall.lanes[0].wall.empty());
  ASSERT_EQ(withWall.lanes[1].wall.size(), back.lanes[1].events.size());
  EXPECT_NEAR(withWall.lanes[1].wall[1].start, 0.0015, 1e-9);
  EXPECT_EQ(withWall.lanes[1].wall[1].kind, TimelineBar::Forward);
  EXPECT_NEAR(withWall.wall_s, back.lanes[1].events.back().wall + s.update, 1e-9);
  EXPECT_EQ(back.lanes[1].events[1].role, TraceEvent::Forward);
  EXPECT_EQ(back.lanes[1].events[2].dense, 4000u);
  EXPECT_EQ(back.lanes[1].events.back().role, TraceEvent::Update);
  EXPECT_EQ(timelineOf(back).step_s, timelineOf(trace).step_s);
  // A role on anything but compute is damage.
  auto bad = encodeTrace(trace);
  bad[1 + 16 + 2 + 4 + 8] = uint8_t(TraceEvent::SendForward | (TraceEvent::Forward << 4));
  EXPECT_THROW(decodeTrace(bad), TraceError);
  // Without roles (a trace saved before they were kept) the passes are plain compute, the last one the update.
  StepTrace old = trace;
  for (auto& lane : old.lanes)
    for (auto& e : lane.events) e.role = TraceEvent::Unknown, e.dense = 0;
  const Timeline t = timelineOf(old);
  expectTiled(t);
  EXPECT_EQ(t.step_s, timelineOf(trace).step_s);
  for (const auto& b : t.lanes[0].bars) EXPECT_NE(b.kind, TimelineBar::Forward);
  EXPECT_NEAR(decompose(t).bubble, decompose(timelineOf(trace)).bubble, 1e-12);
  for (const auto& c : decompose(t).links) EXPECT_FALSE(c.costs_more()) << "nothing to weigh without float32 sizes";
}

// A profile stands on its run's median step: a step slowed by something else on the machine is not taken for the
// run's step, nor is an unusually quick one.
TEST(MedianStep, TheMiddleOfTheStepsReplayedUnderTheirOwnNetwork) {
  std::vector<StepTrace> steps;
  for (double forward : {3.0, 1.0, 9.0, 2.0, 4.0}) {  // milliseconds per forward pass
    Shape s;
    s.forward = forward / 1000;
    steps.push_back(pipelineTrace(s));
  }
  EXPECT_EQ(replay(medianStep(steps)), replay(steps[0])) << "3 ms passes: the middle of 1, 2, 3, 4, 9";
  EXPECT_EQ(&medianStep(steps), &steps[0]) << "the step itself, not a copy";
  steps.pop_back();  // 1, 2, 3, 9: the lower middle
  EXPECT_EQ(&medianStep(steps), &steps[3]);
  steps.resize(1);
  EXPECT_EQ(&medianStep(steps), &steps[0]);
  EXPECT_THROW(medianStep({}), std::invalid_argument);
  // Each step is replayed under its own network: a slow link makes a step slow as slow passes do.
  std::vector<StepTrace> links(3, pipelineTrace(Shape{}));
  links[0].model.bandwidth_mbps = 1, links[1].model.bandwidth_mbps = 10;
  EXPECT_EQ(&medianStep(links), &links[1]);
}

}  // namespace
