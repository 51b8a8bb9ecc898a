// Step traces: the replay of a step's events for another network, their stored form read from untrusted bytes, and
// re-timing a stored run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/core/StepTrace.h"
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

using namespace ps;

namespace {

TraceEvent ev(TraceEvent::Kind k, double seconds, uint64_t bytes = 0, double decode = 0) {
  TraceEvent e;
  e.kind = k;
  e.seconds = seconds;
  e.bytes = bytes;
  e.decode = decode;
  return e;
}

// The stored form as builds before version 4 wrote it: no compute roles and no float32 sizes; version 1 without the
// framing, 2 without the egress.
std::vector<uint8_t> olderForm(const StepTrace& t, uint8_t version) {
  std::vector<uint8_t> out;
  auto raw = [&](const auto& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  };
  auto varint = [&](uint64_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(uint8_t(v) | 0x80);
    out.push_back(uint8_t(v));
  };
  raw(version);
  raw(t.model.bandwidth_mbps);
  raw(t.model.latency_ms);
  if (version >= 2) raw(uint8_t(t.model.tcp));
  if (version >= 3) raw(uint8_t(t.model.shared_egress));
  raw(uint32_t(t.lanes.size()));
  for (const auto& lane : t.lanes) {
    raw(uint16_t(lane.stage));
    raw(uint16_t(lane.replica));
    raw(uint32_t(lane.events.size()));
    for (const auto& e : lane.events) {
      raw(uint8_t(e.kind));
      raw(float(e.seconds));
      if (e.kind == TraceEvent::ExchangeCompressed) raw(float(e.decode));
      if (e.kind != TraceEvent::Compute && e.kind != TraceEvent::ReceiveForward && e.kind != TraceEvent::ReceiveBackward)
        varint(e.bytes);
    }
  }
  return out;
}

// Two stages, one micro-batch: stage 0 computes 10 ms, encodes 1 ms and sends 125,000 bytes (1 Mbit); stage 1
// decodes 0.5 ms, computes 20 ms, encodes 1 ms and sends 12,500 bytes back; stage 0 decodes 2 ms, computes 3 ms
// backward and 1 ms in its update; stage 1 computes 1 ms in its update. Durations are powers of two over 1024 so the
// sums below are exact.
StepTrace twoStages(double bandwidth, double latency) {
  StepTrace t;
  t.model.bandwidth_mbps = bandwidth;
  t.model.latency_ms = latency;
  TraceLane a, b;
  a.stage = 0, b.stage = 1;
  const double ms = 1.0 / 1024;
  a.events = {ev(TraceEvent::Compute, 10 * ms), ev(TraceEvent::SendForward, 1 * ms, 125000),
              ev(TraceEvent::ReceiveBackward, 2 * ms), ev(TraceEvent::Compute, 3 * ms), ev(TraceEvent::Compute, ms)};
  b.events = {ev(TraceEvent::ReceiveForward, 0.5 * ms), ev(TraceEvent::Compute, 20 * ms),
              ev(TraceEvent::SendBackward, 1 * ms, 12500), ev(TraceEvent::Compute, ms)};
  t.lanes = {a, b};
  return t;
}

}  // namespace

TEST(StepTrace, ReplayIsTheCriticalPathOfTheStepsEvents) {
  const double ms = 1.0 / 1024;
  const StepTrace t = twoStages(100, 1);
  // Forward: 11 ms to encode, 10 ms on the wire (1 Mbit at 100 Mbit/s), 1 ms latency; stage 1 then decodes 0.5,
  // computes 20, encodes 1; back over the wire 1 ms + 1 ms latency; stage 0 decodes 2, computes 3 + 1.
  const double forwardArrives = 11 * ms + 0.01 + 0.001;
  const double backSent = forwardArrives + 21.5 * ms;
  const double backArrives = backSent + 0.001 + 0.001;
  EXPECT_NEAR(replay(t), backArrives + 6 * ms, 1e-12);
  // Another network replays the same events: 10x the bandwidth takes 9 ms + 0.9 ms off the two transfers.
  LinkModel fast = t.model;
  fast.bandwidth_mbps = 1000;
  EXPECT_NEAR(replay(t) - replay(t, fast), 0.0099, 1e-12);
  // Latency is paid once per message on the critical path.
  LinkModel slow = t.model;
  slow.latency_ms = 11;
  EXPECT_NEAR(replay(t, slow) - replay(t), 0.020, 1e-12);
}

TEST(StepTrace, ALinkSendsOneMessageAtATime) {
  StepTrace t;
  t.model.bandwidth_mbps = 8;  // 1 byte per microsecond
  TraceLane a, b;
  a.stage = 0, b.stage = 1;
  a.events = {ev(TraceEvent::SendForward, 0, 1000), ev(TraceEvent::SendForward, 0, 1000)};
  b.events = {ev(TraceEvent::ReceiveForward, 0), ev(TraceEvent::ReceiveForward, 0)};
  t.lanes = {b, a};  // the receiver first: it waits for the sender
  EXPECT_NEAR(replay(t), 0.002, 1e-12) << "the second message waits for the first to leave";
}

TEST(StepTrace, ReplicasExchangeFromTheSlowestOne) {
  StepTrace t;
  t.model.bandwidth_mbps = 8;
  t.model.latency_ms = 1;
  TraceLane r0, r1;
  r0.replica = 0, r1.replica = 1;
  r0.events = {ev(TraceEvent::Compute, 0.25), ev(TraceEvent::ExchangeCompressed, 0.125, 1000, 0.0625)};
  r1.events = {ev(TraceEvent::Compute, 0.5), ev(TraceEvent::ExchangeCompressed, 0.125, 3000, 0.03125)};
  t.lanes = {r0, r1};
  // Both start when replica 1 has encoded (0.625 s); one round of the largest message: 1 ms + 3 ms.
  EXPECT_NEAR(replay(t), 0.625 + 0.004 + 0.0625, 1e-12);
  t.lanes[0].events[1] = ev(TraceEvent::ExchangeDense, 0, 1000);
  t.lanes[1].events[1] = ev(TraceEvent::ExchangeDense, 0, 1000);
  // A ring all-reduce of 1000 floats over 2 replicas: 2 rounds of 1 ms + 2000 bytes.
  EXPECT_NEAR(replay(t), 0.5 + 2 * (0.001 + 0.002), 1e-12);
}

TEST(StepTrace, EventsThatDoNotFitTogetherAreRefusedNamingTheStage) {
  StepTrace t = twoStages(100, 1);
  t.lanes[0].events.erase(t.lanes[0].events.begin() + 1);  // the forward send is gone
  try {
    replay(t);
    FAIL() << "a receive without a send replayed";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 1 (replica 0) waits at event 0"), std::string::npos) << e.what();
  }
}

// Two lanes for one stage would let many lanes wait on one link (a hostile stored trace made replay quadratic).
TEST(StepTrace, TwoLanesForOneStageAreRefused) {
  StepTrace t = twoStages(100, 1);
  t.lanes.push_back(t.lanes[1]);
  try {
    replay(t);
    FAIL() << "a trace with two lanes for stage 1 replayed";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("two lanes for stage 1 (replica 0)"), std::string::npos) << e.what();
  }
  // A message size no step sends (it would overflow the exchange's arithmetic) and a lane count no run has.
  StepTrace huge = twoStages(100, 1);
  huge.lanes[0].events[1].bytes = uint64_t(1) << 62;
  EXPECT_THROW(decodeTrace(encodeTrace(huge)), TraceError);
  auto many = encodeTrace(twoStages(100, 1));
  const uint32_t lanes = 1u << 20;
  std::memcpy(&many[1 + 16 + 2], &lanes, 4);
  many.resize(many.size() + 8 * size_t(lanes));
  try {
    decodeTrace(many);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("more than any run has"), std::string::npos) << e.what();
  }
}

// Three stages, stage 1 sending 1000 bytes back to stage 0 and then 1000 bytes on to stage 2 at 8 Mbit/s (a byte
// a microsecond), stage 2 computing half a millisecond (a power of two over 2048: exact as a float) after it
// receives. With a wire per link direction both leave at once; through one interface per stage the second waits
// for the first.
StepTrace middleStageSendsBothWays() {
  StepTrace t;
  t.model.bandwidth_mbps = 8;
  TraceLane a, b, c;
  a.stage = 0, b.stage = 1, c.stage = 2;
  a.events = {ev(TraceEvent::ReceiveBackward, 0)};
  b.events = {ev(TraceEvent::SendBackward, 0, 1000), ev(TraceEvent::SendForward, 0, 1000)};
  c.events = {ev(TraceEvent::ReceiveForward, 0), ev(TraceEvent::Compute, 1.0 / 2048)};
  t.lanes = {a, c, b};  // the receivers first: they wait for the sender
  return t;
}

TEST(StepTrace, AStageWithOneInterfaceSendsItsTwoDirectionsOneAfterTheOther) {
  StepTrace t = middleStageSendsBothWays();
  const double half = 1.0 / 2048;
  EXPECT_NEAR(replay(t), 0.001 + half, 1e-12) << "a wire per direction: both messages arrive after 1 ms";
  t.model.shared_egress = true;
  EXPECT_NEAR(replay(t), 0.002 + half, 1e-12) << "one interface: the forward message leaves after the backward one";
  // Only a stage's own messages queue together: the first stage's messages do not wait for the second's.
  StepTrace apart;
  apart.model.bandwidth_mbps = 8;
  apart.model.shared_egress = true;
  TraceLane s0{0, 0, {ev(TraceEvent::SendForward, 0, 1000)}},
      s1{1, 0, {ev(TraceEvent::ReceiveForward, 0), ev(TraceEvent::SendForward, 0, 1000)}},
      s2{2, 0, {ev(TraceEvent::ReceiveForward, 0)}};
  apart.lanes = {s0, s1, s2};
  EXPECT_NEAR(replay(apart), 0.002, 1e-12);
  // The stored form keeps it, and a trace from before it was kept (version 2) had a wire per direction.
  const auto bytes = encodeTrace(t);
  EXPECT_TRUE(decodeTrace(bytes).model.shared_egress);
  EXPECT_EQ(replay(decodeTrace(bytes)), replay(t));
  const auto v2 = olderForm(t, 2);
  EXPECT_FALSE(decodeTrace(v2).model.shared_egress);
  EXPECT_NEAR(replay(decodeTrace(v2)), 0.001 + half, 1e-12);
}

// Each stage's wall times count from its own start of the step until the lanes are laid on one clock: then from the
// first stage's start, so a late stage's events move by how late it began; unknown times stay unknown.
TEST(StepTrace, LanesThatBeganApartAreLaidOnOneClock) {
  StepTrace t = twoStages(100, 1);
  TraceLane c;
  c.stage = 2;
  c.events = {ev(TraceEvent::ReceiveForward, 0.001), ev(TraceEvent::Compute, 0.002)};
  t.lanes.push_back(c);
  for (auto& lane : t.lanes) {
    double at = 0.0005;
    for (auto& e : lane.events) e.wall = at, at += e.seconds;
  }
  t.lanes[2].events[1].wall = -1;
  const auto before = t.lanes;
  // Stage 1 began 2.5 ms after stage 0 and stage 2 (on a clock far from zero, as a steady clock reads) 1.25 ms before.
  const int64_t base = int64_t(1) << 50;
  alignWallTimes(t.lanes, {base + 1'250'000, base + 3'750'000, base});
  const double shift[] = {0.00125, 0.00375, 0};
  for (size_t l = 0; l < 3; ++l)
    for (size_t i = 0; i < before[l].events.size(); ++i) {
      if (before[l].events[i].wall < 0) {
        EXPECT_EQ(t.lanes[l].events[i].wall, -1) << "an unknown wall time stays unknown";
        continue;
      }
      EXPECT_NEAR(t.lanes[l].events[i].wall, before[l].events[i].wall + shift[l], 1e-12)
          << "lane " << l << " event " << i;
    }
  // A start an hour and more from the others is a misread clock, not a stage that began late; so is a count that
  // does not match the lanes.
  auto lanes = before;
  try {
    alignWallTimes(lanes, {base, base + int64_t(3601) * 1'000'000'000, base});
    ADD_FAILURE() << "a start 3601 s late was taken";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 1 (replica 0) began its step 3601"), std::string::npos) << e.what();
  }
  EXPECT_THROW(alignWallTimes(lanes, {base}), TraceError);
  EXPECT_NO_THROW(alignWallTimes(lanes, {INT64_MIN, INT64_MIN + 5, INT64_MIN}));  // far from zero either way
  EXPECT_THROW(alignWallTimes(lanes, {INT64_MIN, INT64_MAX, 0}), TraceError);     // and as far apart as can be
}

TEST(StepTrace, StoredFormRoundTripsAndRefusesDamage) {
  StepTrace t = twoStages(123.5, 0.25);
  t.lanes.push_back(TraceLane{2, 1, {ev(TraceEvent::ExchangeCompressed, 0.5, 1ull << 40, 0.25)}});
  const auto bytes = encodeTrace(t);
  const StepTrace back = decodeTrace(bytes);
  EXPECT_EQ(back.model.bandwidth_mbps, 123.5);
  EXPECT_EQ(back.model.latency_ms, 0.25);
  ASSERT_EQ(back.lanes.size(), 3u);
  EXPECT_EQ(back.lanes[2].stage, 2);
  EXPECT_EQ(back.lanes[2].replica, 1);
  EXPECT_EQ(back.lanes[2].events[0].bytes, 1ull << 40);
  EXPECT_EQ(back.lanes[2].events[0].decode, 0.25);
  EXPECT_EQ(encodeTrace(back), bytes);
  EXPECT_EQ(replay(back), replay(t));
  // Every truncation is an error, never a crash or a short trace.
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(decodeTrace(bytes.data(), n), TraceError) << n;
  auto damaged = bytes;
  damaged.push_back(0);
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  damaged[0] = 7;  // a newer version
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  damaged[1 + 16 + 2 + 4 + 8] = 9;  // the first event's kind
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  const float negative = -1;
  std::memcpy(&damaged[1 + 16 + 2 + 4 + 8 + 1], &negative, 4);
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  const uint32_t huge = 0xffffffffu;
  std::memcpy(&damaged[1 + 16 + 2 + 4 + 4], &huge, 4);  // the first lane's event count
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  damaged[1 + 16] = 5;  // the framing
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  damaged = bytes;
  damaged[1 + 16 + 1] = 2;  // the egress
  EXPECT_THROW(decodeTrace(damaged), TraceError);
  EXPECT_THROW(decodeTrace(bytes.data(), bytes.size(), 3), TraceError) << "more events than allowed";
  const auto lane = encodeLane(t.lanes[1]);
  EXPECT_EQ(decodeLane(lane.data(), lane.size()).events.size(), t.lanes[1].events.size());
  TraceLane first{0, 0, {ev(TraceEvent::SendBackward, 0, 1)}};
  const auto impossible = encodeLane(first);
  EXPECT_THROW(decodeLane(impossible.data(), impossible.size()), TraceError) << "stage 0 has no previous stage";
}

// TCP framing: every 1448 payload bytes or part of them carry 66 bytes of headers on the wire.
TEST(StepTrace, TcpFramingChargesHeadersPerSegmentAndIsKept) {
  LinkModel ideal{100, 0};
  LinkModel tcp = ideal;
  tcp.tcp = true;
  EXPECT_EQ(tcp.wireBytes(0), 0u);
  EXPECT_EQ(tcp.wireBytes(1), 67u);
  EXPECT_EQ(tcp.wireBytes(1448), 1514u);
  EXPECT_EQ(tcp.wireBytes(1449), 1449u + 132);
  EXPECT_EQ(ideal.wireBytes(1449), 1449u);
  StepTrace t = twoStages(100, 1);
  t.model.tcp = true;
  ideal = t.model;
  ideal.tcp = false;
  const uint64_t segments = (125000 + 1447) / 1448 + (12500 + 1447) / 1448;
  EXPECT_NEAR(replay(t) - replay(t, ideal), 8.0 * 66 * double(segments) / 100e6, 1e-12);
  const StepTrace back = decodeTrace(encodeTrace(t));
  EXPECT_TRUE(back.model.tcp);
  EXPECT_EQ(replay(back), replay(t));
  // A trace written before framing was kept (version 1) is an ideal link.
  const StepTrace v1 = decodeTrace(olderForm(t, 1));
  EXPECT_FALSE(v1.model.tcp);
  EXPECT_EQ(replay(v1), replay(twoStages(100, 1)));
}

TEST(Retime, AStoredRunReplaysToItsOwnTimeAndToAnotherNetwork) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t id = store.createRun("r", "{}", "v");
  std::vector<TraceRow> rows;
  for (int64_t step = 1; step <= 4; ++step) rows.push_back({step, (step - 1) / 2, encodeTrace(twoStages(100, 1))});
  store.append(id, {{2, "eval/accuracy", 0.5, 1, 1}, {2, "eval/loss", 1.5, 1, 1}, {4, "eval/accuracy", 0.75, 2, 2}}, {},
               {}, rows);
  const double step = replay(twoStages(100, 1));
  const RetimedRun own = retimeRun(store, id, {});
  EXPECT_EQ(own.emulated_s, own.recorded_emulated_s);
  EXPECT_EQ(own.emulated_s, ((step + step) + step) + step) << "not the engine's sum, in its order";
  EXPECT_EQ(own.steps, 4);
  ASSERT_EQ(own.epochs.size(), 2u);
  EXPECT_EQ(own.epochs[1].first, 1);
  ASSERT_EQ(own.evaluations.size(), 2u);
  EXPECT_EQ(own.evaluations[0].step, 2);
  EXPECT_EQ(own.evaluations[0].emulated_s, step + step);
  EXPECT_EQ(own.evaluations[0].values.at("eval/loss"), 1.5);

  RetimeNetwork slower;
  slower.bandwidth_mbps = 10;
  const RetimedRun slow = retimeRun(store, id, slower);
  EXPECT_NEAR(slow.emulated_s - own.emulated_s, 4 * 9 * (0.01 + 0.001), 1e-9);
  EXPECT_EQ(slow.recorded_emulated_s, own.recorded_emulated_s);

  // The same steps with TCP framing: 66 header bytes for every 1448 payload bytes or part of them, both messages
  // on the critical path (125000 bytes: 87 segments; 12500 bytes: 9).
  RetimeNetwork framed;
  framed.tcp = true;
  const RetimedRun tcp = retimeRun(store, id, framed);
  EXPECT_NEAR(tcp.emulated_s - own.emulated_s, 4 * (87 + 9) * 66 * 8 / 100e6, 1e-9);
  framed.tcp = false;
  EXPECT_EQ(retimeRun(store, id, framed).emulated_s, own.emulated_s) << "the steps' own framing";

  for (double bad : {0.0, -5.0, std::nan("")}) {
    RetimeNetwork n;
    n.bandwidth_mbps = bad;
    EXPECT_THROW(retimeRun(store, id, n), TraceError);
  }
  RetimeNetwork negative;
  negative.latency_ms = -1;
  EXPECT_THROW(retimeRun(store, id, negative), TraceError);
  const int64_t bare = store.createRun("old", "{}", "v");
  try {
    retimeRun(store, bare, {});
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("has no step traces"), std::string::npos) << e.what();
  }
  store.append(bare, {}, {}, {}, {{1, 0, {1, 2}}});
  try {
    retimeRun(store, bare, {});
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(", step 1: step trace"), std::string::npos) << e.what();
  }
}

TEST(Retime, TimeToTargetAtTheRecordedAndAtAnotherNetwork) {
  test::RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t id = store.createRun("r", "{}", "v");
  std::vector<TraceRow> rows;
  for (int64_t step = 1; step <= 4; ++step) rows.push_back({step, 0, encodeTrace(twoStages(100, 1))});
  const double step = replay(twoStages(100, 1));
  store.append(id,
               {{2, "eval/accuracy", 0.5, 1, 2 * step},
                {4, "eval/accuracy", 0.9, 2, 4 * step},
                {4, "eval/accuracy_uncompressed", 0.95, 2, 4 * step}},
               {}, {}, rows);
  // 0.7 is half way between the evaluations at steps 2 and 4.
  auto own = timeToTarget(store, id, "eval/accuracy", 0.7, true, {});
  ASSERT_TRUE(own.seconds);
  EXPECT_NEAR(*own.seconds, 3 * step, 1e-12);
  RetimeNetwork slower;
  slower.bandwidth_mbps = 10;
  auto slow = timeToTarget(store, id, "eval/accuracy", 0.7, true, slower);
  ASSERT_TRUE(slow.seconds);
  EXPECT_NEAR(*slow.seconds, 3 * replay(twoStages(100, 1), LinkModel{10, 1}), 1e-9);
  // A framing alone is a network too: each step costs the TCP headers of its two messages more (87 and 9 segments).
  RetimeNetwork framed;
  framed.tcp = true;
  EXPECT_FALSE(framed.empty());
  auto tcp = timeToTarget(store, id, "eval/accuracy", 0.7, true, framed);
  ASSERT_TRUE(tcp.seconds);
  EXPECT_NEAR(*tcp.seconds - *own.seconds, 3 * (87 + 9) * 66 * 8 / 100e6, 1e-9);
  RetimeNetwork egress;
  egress.shared_egress = false;
  EXPECT_FALSE(egress.empty());
  EXPECT_TRUE(RetimeNetwork{}.empty());
  EXPECT_EQ(timeToTarget(store, id, "eval/accuracy", 0.99, true, {}).why, "not reached");
  EXPECT_EQ(timeToTarget(store, id, "eval/perplexity", 10, false, {}).why, "no evaluation");
  const int64_t bare = store.createRun("old", "{}", "v");
  store.append(bare, {{2, "eval/accuracy", 0.8, 1, 1}}, {}, {}, {});
  EXPECT_TRUE(timeToTarget(store, bare, "eval/accuracy", 0.7, true, {}).seconds);
  EXPECT_NE(timeToTarget(store, bare, "eval/accuracy", 0.7, true, slower).why.find("no step traces"),
            std::string::npos);
}
