#include "engine/core/StepTrace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <tuple>

namespace ps {
namespace {

// 1: the link model without framing (an ideal link); 2: a framing byte after the latency; 3: then an egress byte
// (0: a wire per link direction, 1: one interface per stage).
constexpr uint8_t kVersion = 3;
constexpr uint64_t kMostBytes = uint64_t(1) << 48;  // a message (or a dense exchange's values) larger is not one
constexpr uint32_t kMostLanes = 1u << 16;           // stages x replicas of any run

bool sends(TraceEvent::Kind k) {
  return k == TraceEvent::SendForward || k == TraceEvent::SendBackward;
}
bool receives(TraceEvent::Kind k) {
  return k == TraceEvent::ReceiveForward || k == TraceEvent::ReceiveBackward;
}
bool exchanges(TraceEvent::Kind k) {
  return k == TraceEvent::ExchangeDense || k == TraceEvent::ExchangeCompressed;
}

// The link direction an event uses: (boundary, direction, replica). Stage s sends forward on boundary s and
// backward on boundary s - 1; it receives forward on s - 1 and backward on s.
std::tuple<int, int, int> linkOf(const TraceLane& lane, TraceEvent::Kind k) {
  switch (k) {
    case TraceEvent::SendForward:
      return {lane.stage, 0, lane.replica};
    case TraceEvent::ReceiveForward:
      return {lane.stage - 1, 0, lane.replica};
    case TraceEvent::SendBackward:
      return {lane.stage - 1, 1, lane.replica};
    default:
      return {lane.stage, 1, lane.replica};  // ReceiveBackward
  }
}

std::string laneName(const TraceLane& lane) {
  return "stage " + std::to_string(lane.stage) + " (replica " + std::to_string(lane.replica) + ")";
}

}  // namespace

double replay(const StepTrace& trace, const LinkModel& model) {
  // A worklist: a lane runs until it waits for a message or an exchange and is woken by the send or the last
  // replica that frees it, so every event is visited once however the lanes interleave (the bytes may be hostile).
  struct Lane {
    size_t next = 0;
    double clock = 0;
    bool waiting = false;  // at an exchange, its own part (the encode) done
    double egress = 0;     // its interface free again (shared_egress): its sends in both directions queue there
  };
  struct LinkSide {
    std::deque<double> arrivals;
    double busy_until = 0;
    std::vector<size_t> receivers;  // lanes waiting for a message here
  };
  const auto& lanes = trace.lanes;
  {  // one lane per stage and replica, so one receiver per link direction: what keeps the worklist linear
    std::set<std::pair<int, int>> seen;
    for (const auto& l : lanes)
      if (!seen.insert({l.stage, l.replica}).second)
        throw TraceError("the step's trace has two lanes for " + laneName(l));
  }
  std::vector<Lane> state(lanes.size());
  std::map<std::tuple<int, int, int>, LinkSide> links;
  std::map<int, std::vector<size_t>> replicasOf;  // stage -> its lanes
  std::map<int, size_t> arrived;                  // stage -> replicas waiting at its exchange
  for (size_t i = 0; i < lanes.size(); ++i) replicasOf[lanes[i].stage].push_back(i);
  std::deque<size_t> runnable;
  for (size_t i = 0; i < lanes.size(); ++i) runnable.push_back(i);

  // The exchange of `stage`, once every replica waits at it: the arithmetic of GradientExchange, in its order.
  auto exchange = [&](int stage) {
    const auto& group = replicasOf[stage];
    double start = 0;
    uint64_t largest = 0;
    for (size_t i : group) {
      const auto& e = lanes[i].events[state[i].next];
      start = std::max(start, state[i].clock);
      largest = std::max(largest, e.bytes);
    }
    const int replicas = int(group.size());
    for (size_t i : group) {
      const auto& e = lanes[i].events[state[i].next];
      Lane& s = state[i];
      if (e.kind == TraceEvent::ExchangeDense)
        s.clock = start + model.ringAllReduceSeconds(e.bytes, replicas);
      else
        s.clock = start + model.allGatherSeconds(largest, replicas) + e.decode;
      s.waiting = false;
      ++s.next;
      runnable.push_back(i);
    }
    arrived[stage] = 0;
  };

  while (!runnable.empty()) {
    const size_t i = runnable.front();
    runnable.pop_front();
    const TraceLane& lane = lanes[i];
    Lane& s = state[i];
    while (s.next < lane.events.size() && !s.waiting) {
      const TraceEvent& e = lane.events[s.next];
      if (e.kind == TraceEvent::Compute) {
        s.clock += e.seconds;
      } else if (sends(e.kind)) {
        LinkSide& l = links[linkOf(lane, e.kind)];
        s.clock += e.seconds;
        l.arrivals.push_back(model.queue(s.clock, e.bytes, model.shared_egress ? s.egress : l.busy_until));
        for (size_t w : l.receivers) runnable.push_back(w);
        l.receivers.clear();
      } else if (receives(e.kind)) {
        LinkSide& l = links[linkOf(lane, e.kind)];
        if (l.arrivals.empty()) {  // its sender has not got there yet: woken by the send
          l.receivers.push_back(i);
          break;
        }
        s.clock = std::max(s.clock, l.arrivals.front()) + e.seconds;
        l.arrivals.pop_front();
      } else {  // an exchange: this replica's encode (or arithmetic), then the group's once the last replica is there
        s.clock += e.seconds;
        s.waiting = true;
        const auto& group = replicasOf[lane.stage];
        if (++arrived[lane.stage] == group.size()) {
          const bool same = std::all_of(group.begin(), group.end(),
                                        [&](size_t j) { return lanes[j].events[state[j].next].kind == e.kind; });
          if (!same)
            throw TraceError("the step's trace does not fit together: the replicas of stage " +
                             std::to_string(lane.stage) + " meet at exchanges of different kinds");
          exchange(lane.stage);  // wakes every replica, this one included
        }
        break;
      }
      ++s.next;
    }
  }
  std::string stuck;
  size_t waiting = 0;
  for (size_t i = 0; i < lanes.size(); ++i)
    if (state[i].next < lanes[i].events.size() && ++waiting <= 4)
      stuck += (stuck.empty() ? "" : ", ") + laneName(lanes[i]) + " waits at event " + std::to_string(state[i].next);
  if (waiting > 4) stuck += " and " + std::to_string(waiting - 4) + " more";
  if (!stuck.empty())
    throw TraceError("the step's trace does not fit together: " + stuck +
                     ", for messages or an exchange no other stage provides");
  double emulated = 0;
  for (const Lane& s : state) emulated = std::max(emulated, s.clock);
  return emulated;
}

namespace {

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  template <typename T>
  void raw(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.insert(out_.end(), b, b + sizeof(T));
  }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(uint8_t(v) | 0x80);
      v >>= 7;
    }
    out_.push_back(uint8_t(v));
  }

 private:
  std::vector<uint8_t>& out_;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  template <typename T>
  T raw(const char* what) {
    if (size_t(end_ - p_) < sizeof(T)) throw TraceError(std::string("step trace ends inside ") + what);
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  uint64_t varint(const char* what) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = raw<uint8_t>(what);
      if (shift == 63 && b > 1) break;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw TraceError(std::string("step trace: ") + what + " is longer than 64 bits");
  }
  double seconds(const char* what) {
    const float v = raw<float>(what);
    if (!std::isfinite(v) || v < 0)
      throw TraceError(std::string("step trace: ") + what + " is " + std::to_string(v) +
                       " (a duration must be a finite number of seconds, not negative)");
    return double(v);
  }
  size_t left() const { return size_t(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

void writeLane(Writer& w, const TraceLane& lane) {
  if (lane.stage < 0 || lane.stage > 0xffff || lane.replica < 0 || lane.replica > 0xffff)
    throw TraceError("a step trace lane's stage and replica must be in 0..65535");
  w.raw(uint16_t(lane.stage));
  w.raw(uint16_t(lane.replica));
  w.raw(uint32_t(lane.events.size()));
  for (const auto& e : lane.events) {
    w.raw(uint8_t(e.kind));
    w.raw(float(e.seconds));
    if (e.kind == TraceEvent::ExchangeCompressed) w.raw(float(e.decode));
    if (sends(e.kind) || exchanges(e.kind)) w.varint(e.bytes);
  }
}

TraceLane readLane(Reader& r, size_t& budget) {
  TraceLane lane;
  lane.stage = r.raw<uint16_t>("a lane's stage");
  lane.replica = r.raw<uint16_t>("a lane's replica");
  const uint32_t count = r.raw<uint32_t>("a lane's event count");
  constexpr size_t kSmallestEvent = 5;  // kind + seconds
  if (count > budget || size_t(count) * kSmallestEvent > r.left())
    throw TraceError("step trace: " + laneName(lane) + " claims " + std::to_string(count) + " events, more than " +
                     (count > budget ? "the " + std::to_string(budget) + " a trace may hold" : "its bytes can hold"));
  budget -= count;
  lane.events.resize(count);
  for (auto& e : lane.events) {
    const uint8_t kind = r.raw<uint8_t>("an event's kind");
    if (kind > TraceEvent::ExchangeCompressed)
      throw TraceError("step trace: " + laneName(lane) + " has an event of unknown kind " + std::to_string(kind));
    e.kind = TraceEvent::Kind(kind);
    e.seconds = r.seconds("an event's seconds");
    if (e.kind == TraceEvent::ExchangeCompressed) e.decode = r.seconds("an exchange's decode seconds");
    if (sends(e.kind) || exchanges(e.kind)) {
      e.bytes = r.varint("a message's bytes");
      if (e.bytes > kMostBytes)
        throw TraceError("step trace: " + laneName(lane) + " has a message of " + std::to_string(e.bytes) +
                         " bytes, more than any step sends");
    }
    const bool noPeer = (e.kind == TraceEvent::ReceiveForward || e.kind == TraceEvent::SendBackward) && lane.stage == 0;
    if (noPeer)
      throw TraceError("step trace: stage 0 cannot " +
                       std::string(e.kind == TraceEvent::SendBackward ? "send backward" : "receive forward"));
  }
  return lane;
}

}  // namespace

std::vector<uint8_t> encodeLane(const TraceLane& lane) {
  std::vector<uint8_t> out;
  Writer w(out);
  writeLane(w, lane);
  return out;
}

TraceLane decodeLane(const uint8_t* data, size_t size, size_t maxEvents) {
  Reader r(data, size);
  auto lane = readLane(r, maxEvents);
  if (r.left()) throw TraceError("step trace: " + std::to_string(r.left()) + " bytes after the lane's events");
  return lane;
}

std::vector<uint8_t> encodeTrace(const StepTrace& trace) {
  std::vector<uint8_t> out;
  Writer w(out);
  w.raw(kVersion);
  w.raw(trace.model.bandwidth_mbps);
  w.raw(trace.model.latency_ms);
  w.raw(uint8_t(trace.model.tcp ? 1 : 0));
  w.raw(uint8_t(trace.model.shared_egress ? 1 : 0));
  w.raw(uint32_t(trace.lanes.size()));
  for (const auto& lane : trace.lanes) writeLane(w, lane);
  return out;
}

StepTrace decodeTrace(const uint8_t* data, size_t size, size_t maxEvents) {
  Reader r(data, size);
  const auto version = r.raw<uint8_t>("the version");
  if (version < 1 || version > kVersion)
    throw TraceError("step trace version " + std::to_string(version) + " is not one this build reads (1 to " +
                     std::to_string(kVersion) + ")" +
                     (version > kVersion ? "; it was written by a newer PipeSqueeze" : ": the trace is damaged"));
  StepTrace t;
  t.model.bandwidth_mbps = r.raw<double>("the bandwidth");
  t.model.latency_ms = r.raw<double>("the latency");
  if (version >= 2) {
    const uint8_t framing = r.raw<uint8_t>("the framing");
    if (framing > 1) throw TraceError("step trace: unknown link framing " + std::to_string(framing));
    t.model.tcp = framing == 1;
  }
  if (version >= 3) {  // before: every link direction had its own wire
    const uint8_t egress = r.raw<uint8_t>("the egress");
    if (egress > 1) throw TraceError("step trace: unknown link egress " + std::to_string(egress));
    t.model.shared_egress = egress == 1;
  }
  if (!std::isfinite(t.model.bandwidth_mbps) || t.model.bandwidth_mbps <= 0 || !std::isfinite(t.model.latency_ms) ||
      t.model.latency_ms < 0)
    throw TraceError("step trace: its link (" + std::to_string(t.model.bandwidth_mbps) + " Mbit/s, " +
                     std::to_string(t.model.latency_ms) + " ms) is not a network");
  const uint32_t lanes = r.raw<uint32_t>("the lane count");
  constexpr size_t kSmallestLane = 8;
  if (lanes > kMostLanes || size_t(lanes) * kSmallestLane > r.left())
    throw TraceError("step trace claims " + std::to_string(lanes) + " lanes, more than " +
                     (lanes > kMostLanes ? "any run has" : "its bytes can hold"));
  for (uint32_t i = 0; i < lanes; ++i) t.lanes.push_back(readLane(r, maxEvents));
  if (r.left()) throw TraceError("step trace: " + std::to_string(r.left()) + " bytes after its last lane");
  return t;
}

}  // namespace ps
