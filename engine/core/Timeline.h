#pragma once
// A step's schedule, micro-batch by micro-batch: when every stage computed, encoded, decoded and waited, and when
// every message left, crossed the wire and arrived, on the emulated clock. It is the replay of a step trace
// (engine/core/StepTrace.h) that keeps every interval instead of only the clocks, so it exists for every saved step,
// for the network the step ran on (where it gives the recorded step time to the bit) and for any other (what if).
//
// Every lane's bars tile [0, step_s] without gaps or overlaps: what a stage did, and the idle time between, with its
// cause. From the timeline come the step's decomposition: the bubble fraction against the schedule's ideal, the
// critical path (the chain of work and wire that set the step's length), and per link direction the codec's time
// against the wire time it saved compared with sending float32.
//
// Torch-free: the run store's readers (the CLI, the app) build timelines without the engine.
#include "engine/core/StepTrace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct TimelineBar {
  enum Kind : uint8_t {
    Forward,   // a micro-batch's forward pass
    Backward,  // its backward pass
    Update,    // the optimizer step
    Compute,   // compute of a trace saved before its role was kept
    Encode,    // a message's encode (or a replica's part of the gradient exchange: its encode or arithmetic)
    Decode,    // a message's decode
    Exchange,  // the replicas' gradient exchange, from when the last replica is there (wire and decode)
    Idle,
  };
  enum Cause : uint8_t {
    None,
    Activation,  // waiting for a micro-batch's activation, still being computed upstream
    Gradient,    // waiting for a micro-batch's gradient, still being computed downstream
    Link,        // waiting for a message that was ready before the wait began: its wire (queue, transfer, latency)
    Replicas,    // waiting at the gradient exchange for the stage's other replicas
    StepEnd,     // done, waiting for the step's slowest lane (the step ends when every stage has updated)
  };
  Kind kind = Idle;
  Cause cause = None;
  double start = 0, end = 0;
  int microbatch = -1;  // Forward, Backward and their messages' codec and waits; -1 otherwise
  int message = -1;     // Encode, Decode and a wait for a message: its index in Timeline::messages
};

struct TimelineMessage {
  int boundary = 0;        // between stage `boundary` and `boundary + 1`
  bool forward = true;     // an activation (else a gradient going back)
  int replica = 0;
  int microbatch = 0;
  size_t from = 0, to = 0;  // lanes
  double ready = 0;     // encoded on the sender
  double leave = 0;     // its first byte on the wire (later than ready when the wire is busy)
  double wire_end = 0;  // its last byte left
  double arrival = 0;   // a latency later
  double encode_s = 0, decode_s = 0;
  uint64_t bytes = 0, dense = 0;  // on the wire; as float32 (0: not recorded)
};

struct TimelineLane {
  int stage = 0, replica = 0;
  std::vector<TimelineBar> bars;
  double busy_until = 0;  // its last event's end (then idle, StepEnd, until the step's end)
  // The same events where they ran on the wall clock (seconds since the step's first stage began it, every stage on
  // one clock: StepTrace's alignWallTimes()), as measured: no idle bars (waits are the gaps between), durations
  // unscaled. Empty for traces saved before it was kept.
  std::vector<TimelineBar> wall;
};

struct Timeline {
  LinkModel model;
  double step_s = 0;
  int stages = 0, replicas = 0, microbatches = 0;
  std::vector<TimelineLane> lanes;  // in the trace's order
  std::vector<TimelineMessage> messages;
  double wall_s = 0;  // the latest end of a wall bar (0: no wall times)
  // The bubble the schedule alone makes of these stages: every pass at its stage's mean (forward and backward
  // apart), the codec as measured, free links (evenPasses). Against `bubble` it tells unequal stages (here) from waits
  // for links and passes that ran late (not here). -1 where the trace does not say which compute was which pass.
  double stages_bubble = -1;
};

// Scales a step's codec times (encode, decode, the exchange's codec) for a cheaper or dearer codec.
struct CodecScale {
  double encode = 1, decode = 1;
};

// A link direction: activations across boundary `boundary` (between stage `boundary` and `boundary + 1`), or the
// activation gradients coming back across it.
struct LinkDirection {
  int boundary = 0;
  bool forward = true;
  bool operator<(const LinkDirection& o) const {
    return boundary != o.boundary ? boundary < o.boundary : forward > o.forward;  // forward first
  }
  bool operator==(const LinkDirection& o) const { return boundary == o.boundary && forward == o.forward; }
};
std::string linkDirectionName(const LinkDirection& d);  // "boundary 1 fwd"

// What one message of a link direction costs: encode and decode seconds and bytes on the wire.
struct MessageCost {
  double encode_s = 0, decode_s = 0, bytes = 0;
};

// Per link direction the step's messages use (every replica's together), what one costs on average.
std::map<LinkDirection, MessageCost> meanMessageCosts(const StepTrace& step);

// The step with every message of each listed direction costing what `costs` says; other directions keep their own,
// and float32 sizes stay.
StepTrace withMessageCosts(const StepTrace& step, const std::map<LinkDirection, MessageCost>& costs);

// The step with each link direction's codec swapped for the one another step (of another run) used: every message
// of a direction takes the other step's mean encode and decode time and mean size there (its float32 size stays).
// Directions the other step does not have keep their own codec.
inline StepTrace withCodecOf(const StepTrace& step, const StepTrace& other) {
  return withMessageCosts(step, meanMessageCosts(other));
}

// The step as the schedule alone would run it: each pass at its stage's (and replica's) mean forward or backward
// time, everything else as measured. Nothing where the trace does not say which compute was which pass (nullopt).
std::optional<StepTrace> evenPasses(const StepTrace& step);

// The share of lanes x the pipeline's window (from 0 to the end of the last micro-batch's work anywhere) in which a
// lane does no micro-batch work; `window` (if given) receives the window.
double bubbleOf(const Timeline& t, double* window = nullptr);

// The timeline of a step under `model`. Throws TraceError as replay() does. `stagesBubble`: also replay the step with
// even passes for Timeline::stages_bubble (a second replay; readers that never show it, like trace files, skip it).
Timeline timelineOf(const StepTrace& trace, const LinkModel& model, const CodecScale& codec = {},
                    bool stagesBubble = true);
inline Timeline timelineOf(const StepTrace& trace) {
  return timelineOf(trace, trace.model);
}

// What the step's time was made of.
struct StepDecomposition {
  double step_s = 0;
  // The bubble: the share of lanes x the pipeline's window (from 0 to the end of the last micro-batch's work
  // anywhere) in which a lane does no micro-batch work (passes and their messages' codec); the ideal is a schedule's
  // with equal stages and free links, (S - 1) / (M + S - 1) for GPipe and 1F1B.
  double pipeline_s = 0, bubble = 0, ideal_bubble = 0;
  double stages_bubble = -1;  // the timeline's stages_bubble: the ideal for these stages as they measured
  struct Segment {
    std::string what;  // "stage 2 backward", "link 1 fwd (replica 0)"
    int stage = -1;    // a lane's segment; -1 for a link's
    int boundary = -1;
    bool forward = true;
    double seconds = 0;
  };
  // The critical path, from the step's end back to 0, summed per stage and per link direction, longest first.
  std::vector<Segment> critical;
  std::string critical_summary;  // "stage 3 (42%), link 2 bwd (30%), …"
  double critical_links_share = 0;  // the links' part of the critical path, all directions together (0 to 1)
  struct LinkCost {
    int boundary = 0;
    bool forward = true;
    uint64_t messages = 0, bytes = 0, dense = 0;
    double codec_s = 0;   // encode + decode, all replicas
    double wire_s = 0;    // transfer time of what was sent
    double saved_s = 0;   // float32's transfer time minus wire_s (0 when float32 sizes were not recorded)
    bool costs_more() const { return dense > 0 && codec_s > saved_s; }
  };
  std::vector<LinkCost> links;  // by boundary, forward before backward
};

StepDecomposition decompose(const Timeline& timeline);

const char* barKindName(TimelineBar::Kind k);
const char* barCauseName(TimelineBar::Cause c);

}  // namespace ps
