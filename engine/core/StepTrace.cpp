#include "engine/core/StepTrace.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ps {
namespace {

// 1: the link model without framing (an ideal link); 2: a framing byte after the latency; 3: then an egress byte
// (0: a wire per link direction, 1: one interface per stage); 4: a compute event's role in the kind byte's high half,
// a send's float32 size after its bytes, and every event's wall-clock start (microseconds + 1, 0: unknown) last.
constexpr uint8_t kVersion = 4;
constexpr uint64_t kMostBytes = uint64_t(1) << 48;  // a message (or a dense exchange's values) larger is not one
constexpr uint32_t kMostLanes = 1u << 16;           // stages x replicas of any run

bool exchanges(TraceEvent::Kind k) {
  return k == TraceEvent::ExchangeDense || k == TraceEvent::ExchangeCompressed;
}

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
    w.raw(uint8_t(e.kind | (e.kind == TraceEvent::Compute ? e.role << 4 : 0)));
    w.raw(float(e.seconds));
    if (e.kind == TraceEvent::ExchangeCompressed) w.raw(float(e.decode));
    if (isSend(e.kind) || exchanges(e.kind)) w.varint(e.bytes);
    if (isSend(e.kind)) w.varint(e.dense);
    w.varint(e.wall < 0 ? 0 : uint64_t(std::llround(e.wall * 1e6)) + 1);
  }
}

TraceLane readLane(Reader& r, size_t& budget, uint8_t version) {
  TraceLane lane;
  lane.stage = r.raw<uint16_t>("a lane's stage");
  lane.replica = r.raw<uint16_t>("a lane's replica");
  const uint32_t count = r.raw<uint32_t>("a lane's event count");
  constexpr size_t kSmallestEvent = 5;  // kind + seconds (+ a wall byte from version 4)
  if (count > budget || size_t(count) * kSmallestEvent > r.left())
    throw TraceError("step trace: " + traceLaneName(lane) + " claims " + std::to_string(count) + " events, more than " +
                     (count > budget ? "the " + std::to_string(budget) + " a trace may hold" : "its bytes can hold"));
  budget -= count;
  lane.events.resize(count);
  for (auto& e : lane.events) {
    const uint8_t byte = r.raw<uint8_t>("an event's kind");
    const uint8_t kind = version >= 4 ? byte & 0x0f : byte, role = version >= 4 ? byte >> 4 : 0;
    if (kind > TraceEvent::ExchangeCompressed)
      throw TraceError("step trace: " + traceLaneName(lane) + " has an event of unknown kind " + std::to_string(kind));
    if (role > TraceEvent::Update || (role && kind != TraceEvent::Compute))
      throw TraceError("step trace: " + traceLaneName(lane) + " has an event of unknown role " + std::to_string(role));
    e.kind = TraceEvent::Kind(kind);
    e.role = TraceEvent::Role(role);
    e.seconds = r.seconds("an event's seconds");
    if (e.kind == TraceEvent::ExchangeCompressed) e.decode = r.seconds("an exchange's decode seconds");
    if (isSend(e.kind) || exchanges(e.kind)) {
      e.bytes = r.varint("a message's bytes");
      if (e.bytes > kMostBytes)
        throw TraceError("step trace: " + traceLaneName(lane) + " has a message of " + std::to_string(e.bytes) +
                         " bytes, more than any step sends");
    }
    if (isSend(e.kind) && version >= 4) {
      e.dense = r.varint("a message's float32 bytes");
      if (e.dense > kMostBytes)
        throw TraceError("step trace: " + traceLaneName(lane) + " has a message of " + std::to_string(e.dense) +
                         " float32 bytes, more than any step sends");
    }
    if (version >= 4) {
      const uint64_t wall = r.varint("an event's wall-clock start");
      constexpr uint64_t kMostMicroseconds = uint64_t(1) << 40;  // 12 days into one step
      if (wall > kMostMicroseconds)
        throw TraceError("step trace: " + traceLaneName(lane) + " has an event starting " + std::to_string(wall) +
                         " us into its step, later than any step lasts");
      e.wall = wall == 0 ? -1 : double(wall - 1) * 1e-6;
    }
    const bool noPeer = (e.kind == TraceEvent::ReceiveForward || e.kind == TraceEvent::SendBackward) && lane.stage == 0;
    if (noPeer)
      throw TraceError("step trace: stage 0 cannot " +
                       std::string(e.kind == TraceEvent::SendBackward ? "send backward" : "receive forward"));
  }
  return lane;
}

}  // namespace

void alignWallTimes(std::vector<TraceLane>& lanes, const std::vector<int64_t>& beganNs) {
  if (beganNs.size() != lanes.size())
    throw TraceError("aligning wall times: " + std::to_string(beganNs.size()) + " starts for " +
                     std::to_string(lanes.size()) + " lanes");
  if (lanes.empty()) return;
  const int64_t first = *std::min_element(beganNs.begin(), beganNs.end());
  for (size_t i = 0; i < lanes.size(); ++i) {
    // In microseconds, as the trace keeps wall times; unsigned, since hostile starts may be far apart.
    const double late = double(uint64_t(beganNs[i]) - uint64_t(first)) * 1e-9;
    if (late > kMostLaneSpread)
      throw TraceError(traceLaneName(lanes[i]) + " began its step " + std::to_string(late) +
                       " s after the first stage, later than any stage starts a step: its clock offset is wrong");
    const double shift = std::round(late * 1e6) * 1e-6;
    for (auto& e : lanes[i].events)
      if (e.wall >= 0) e.wall += shift;
  }
}

std::vector<uint8_t> encodeLane(const TraceLane& lane) {
  std::vector<uint8_t> out;
  Writer w(out);
  writeLane(w, lane);
  return out;
}

TraceLane decodeLane(const uint8_t* data, size_t size, size_t maxEvents) {
  Reader r(data, size);
  auto lane = readLane(r, maxEvents, kVersion);
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
  for (uint32_t i = 0; i < lanes; ++i) t.lanes.push_back(readLane(r, maxEvents, version));
  if (r.left()) throw TraceError("step trace: " + std::to_string(r.left()) + " bytes after its last lane");
  return t;
}

}  // namespace ps
