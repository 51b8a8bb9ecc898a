#pragma once
// What a step's emulated time was made of, kept so that a saved run can be re-timed for another network without
// training again (docs/link-model.md).
//
// The engine's emulated clock is a small event simulation: every stage advances its own clock by the compute it
// measured, a sent message leaves when its sender has encoded it and the wire is free (a link direction's own, or
// with LinkModel::shared_egress the sending stage's one interface; a wire serialises transfers), and arrives
// `latency + 8 * bytes / bandwidth` later; a receiver waits for the arrival, then decodes.
// The step takes as long as its slowest stage. A StepTrace is that simulation's input: every stage's events in the
// order the stage ran them, with the measured durations and the bytes of every message, and the link model the step
// ran under. replay() recomputes the step's critical path for any link model; for the recorded one it gives the
// recorded time to the bit, because it does the engine's arithmetic in the engine's order on the same durations
// (durations are kept at float precision, which the engine rounds them to as it measures: tracedSeconds()).
//
// Torch-free: the run store, the CLI and the app read traces without the engine.
#include <chrono>
#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/core/LinkModel.h"

namespace ps {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A measured duration as the trace keeps it (and as the engine's emulated clock adds it): rounded to float.
inline double tracedSeconds(double seconds) {
  return double(float(seconds));
}

// The time measured since t0 (a stage's compute, a codec's encode), as the trace keeps it.
using TraceClock = std::chrono::steady_clock;
inline int64_t steadyNanoseconds(TraceClock::time_point t) {
  return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}
inline double tracedSince(TraceClock::time_point t0) {
  return tracedSeconds(std::chrono::duration<double>(TraceClock::now() - t0).count());
}

// How a stage's thread measures the durations its emulated clock adds (compute, encode, decode). The emulated clock
// models stages on devices of their own; on this machine they share its cores, and a stage whose thread waits for a
// core while others compute would measure that wait as its own work: a pass slows down whenever its neighbours
// run, and unequal slow-downs show up as pipeline bubbles no real pipeline would have. A stage that computes on its
// thread alone (a CPU stage with one intra-op thread) therefore measures its thread's CPU time, which the waits for
// a core leave out; any other (several intra-op threads, a GPU) measures wall time. Set per thread, by the stage
// worker.
class TraceStopwatch {
 public:
  static void measureThreadCpuTime(bool on) { threadCpu() = on; }
  static bool measuresThreadCpuTime() { return threadCpu(); }
  TraceStopwatch() : wall_(TraceClock::now()), cpu_(threadCpu() ? cpuNow() : 0) {}
  double seconds() const { return threadCpu() ? tracedSeconds(cpuNow() - cpu_) : tracedSince(wall_); }

 private:
  static bool& threadCpu() {
    thread_local bool on = false;
    return on;
  }
  static double cpuNow() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  TraceClock::time_point wall_;
  double cpu_;
};

struct TraceEvent {
  enum Kind : uint8_t {
    Compute = 0,         // seconds: forward, backward or optimizer time
    SendForward = 1,     // seconds: encode; bytes: the payload. On boundary `stage` (forward) or `stage - 1`
    SendBackward = 2,    //   (backward).
    ReceiveForward = 3,  // seconds: decode. On boundary `stage - 1` (forward) or `stage` (backward).
    ReceiveBackward = 4,
    ExchangeDense = 5,       // the replicas' float32 ring all-reduce of `bytes` values after `seconds` of
                             //   arithmetic (PowerSGD's factors; 0 for a plain all-reduce)
    ExchangeCompressed = 6,  // seconds: encode; decode: decode; bytes: this replica's message
  };
  // What a Compute event was (traces saved before it was kept say Unknown): a micro-batch's forward or backward
  // pass, or the optimizer step.
  enum Role : uint8_t { Unknown = 0, Forward = 1, Backward = 2, Update = 3 };
  Kind kind = Compute;
  double seconds = 0;
  double decode = 0;  // ExchangeCompressed only
  uint64_t bytes = 0;
  Role role = Unknown;  // Compute only
  uint64_t dense = 0;   // sends: what the message's tensor is as float32 (0 in traces saved before it was kept)
  // When the event began on the wall clock, in seconds since the step's first stage began it (kept to the
  // microsecond; alignWallTimes() lays every stage on that one clock); -1 where not known (traces saved before it was
  // kept). Traces saved before the stages were laid on one clock count each lane from its own stage's start. The
  // emulated clock is what replay() computes; this is what happened on these machines.
  double wall = -1;
};

inline bool isSend(TraceEvent::Kind k) {
  return k == TraceEvent::SendForward || k == TraceEvent::SendBackward;
}
inline bool isReceive(TraceEvent::Kind k) {
  return k == TraceEvent::ReceiveForward || k == TraceEvent::ReceiveBackward;
}

// One stage of one replica.
struct TraceLane {
  int stage = 0, replica = 0;
  std::vector<TraceEvent> events;
};
// "stage 2 (replica 1)", as errors about a trace name its lanes.
inline std::string traceLaneName(const TraceLane& lane) {
  return "stage " + std::to_string(lane.stage) + " (replica " + std::to_string(lane.replica) + ")";
}

struct StepTrace {
  LinkModel model;  // the link the step ran under (its `throttled` flag is not kept)
  std::vector<TraceLane> lanes;
};

// Whether any event of the step knows when it ran on the wall clock; forgetWallTimes() drops them (steps that
// telemetry.timeline_every does not sample keep only what the emulated clock needs).
inline bool hasWallTimes(const StepTrace& trace) {
  for (const auto& lane : trace.lanes)
    for (const auto& e : lane.events)
      if (e.wall >= 0) return true;
  return false;
}
inline void forgetWallTimes(StepTrace& trace) {
  for (auto& lane : trace.lanes)
    for (auto& e : lane.events) e.wall = -1;
}

// Lays lanes whose wall times count from their own stage's start onto one clock: `beganNs[i]` is when lane i began
// the step, in nanoseconds on a clock every lane shares (in one process the steady clock; across processes rank 0's,
// each rank's reading moved by its measured offset). Every known wall time then counts from the earliest lane's
// start. Starts further apart than any step's stages start (kMostLaneSpread) throw TraceError: a clock was misread.
inline constexpr double kMostLaneSpread = 3600;  // seconds
void alignWallTimes(std::vector<TraceLane>& lanes, const std::vector<int64_t>& beganNs);

// The step's emulated time under `model`: the largest clock any lane ends with. Throws TraceError when the events
// cannot have come from one step (a receive with no matching send, an exchange some replica never joins).
// (Its intervals, not only its clocks: timelineOf() in engine/core/Timeline.h, which shares its arithmetic.)
double replay(const StepTrace& trace, const LinkModel& model);
inline double replay(const StepTrace& trace) {
  return replay(trace, trace.model);
}

// Of several steps of one run, the one a profile should stand on: the median of their replays under each step's
// own network (the lower middle of an even count), so that a step slowed by something else on the machine, or an
// unusually quick one, is not taken for the run's step. Throws std::invalid_argument for no steps, TraceError as
// replay() does.
const StepTrace& medianStep(const std::vector<StepTrace>& steps);

// The stored form (little-endian, versioned). decodeTrace() reads untrusted bytes: anything malformed is a
// TraceError naming what is wrong; at most `maxEvents` events in all are accepted.
std::vector<uint8_t> encodeTrace(const StepTrace& trace);
StepTrace decodeTrace(const uint8_t* data, size_t size, size_t maxEvents = 1u << 20);
inline StepTrace decodeTrace(const std::vector<uint8_t>& bytes) {
  return decodeTrace(bytes.data(), bytes.size());
}

// One lane alone, as a rank sends its part of a step to the others.
std::vector<uint8_t> encodeLane(const TraceLane& lane);
TraceLane decodeLane(const uint8_t* data, size_t size, size_t maxEvents = 1u << 20);

}  // namespace ps
