#include "engine/core/Timeline.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <tuple>

namespace ps {
namespace {

bool forwardMessage(TraceEvent::Kind k) {
  return k == TraceEvent::SendForward || k == TraceEvent::ReceiveForward;
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

void addBar(Timeline* out, size_t lane, TimelineBar bar) {
  if (out && bar.end > bar.start) out->lanes[lane].bars.push_back(bar);
}

// An event where it ran on the wall clock, when its trace kept that.
void addWallBar(Timeline* out, size_t lane, const TraceEvent& e, TimelineBar::Kind kind, int microbatch = -1,
                int message = -1) {
  if (!out || e.wall < 0) return;
  out->lanes[lane].wall.push_back({kind, TimelineBar::None, e.wall, e.wall + e.seconds, microbatch, message});
  out->wall_s = std::max(out->wall_s, e.wall + e.seconds);
}

// The engine's emulated clock, event by event (engine/core/StepTrace.h): the same arithmetic in the same order as
// the live links and the gradient exchange, so the recorded model gives the recorded time to the bit. With `out`,
// every interval is kept too.
double simulate(const StepTrace& trace, const LinkModel& model, const CodecScale& codec, Timeline* out) {
  // A worklist: a lane runs until it waits for a message or an exchange and is woken by the send or the last
  // replica that frees it, so every event is visited once however the lanes interleave (the bytes may be hostile).
  struct Lane {
    size_t next = 0;
    double clock = 0;
    bool waiting = false;  // at an exchange, its own part (the encode) done
    double egress = 0;     // its interface free again (shared_egress): its sends in both directions queue there
    int computed[2] = {0, 0}, sent[2] = {0, 0}, received[2] = {0, 0};  // per direction: forward, backward
  };
  struct LinkSide {
    std::deque<std::pair<double, int>> arrivals;  // (arrival, message) in the order sent
    double busy_until = 0;
    std::vector<size_t> receivers;  // lanes waiting for a message here
  };
  const auto& lanes = trace.lanes;
  {  // one lane per stage and replica, so one receiver per link direction: what keeps the worklist linear
    std::set<std::pair<int, int>> seen;
    for (const auto& l : lanes)
      if (!seen.insert({l.stage, l.replica}).second)
        throw TraceError("the step's trace has two lanes for " + traceLaneName(l));
  }
  if (out) {
    out->model = model;
    out->lanes.resize(lanes.size());
    for (size_t i = 0; i < lanes.size(); ++i) {
      out->lanes[i].stage = lanes[i].stage, out->lanes[i].replica = lanes[i].replica;
      out->stages = std::max(out->stages, lanes[i].stage + 1);
      out->replicas = std::max(out->replicas, lanes[i].replica + 1);
    }
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
      addBar(out, i, {TimelineBar::Idle, TimelineBar::Replicas, s.clock, start});
      if (e.kind == TraceEvent::ExchangeDense)
        s.clock = start + model.ringAllReduceSeconds(e.bytes, replicas);
      else
        s.clock = start + model.allGatherSeconds(largest, replicas) + e.decode * codec.decode;
      addBar(out, i, {TimelineBar::Exchange, TimelineBar::None, start, s.clock});
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
      const double before = s.clock;
      if (e.kind == TraceEvent::Compute) {
        s.clock += e.seconds;
        if (out) {
          const bool pass = e.role == TraceEvent::Forward || e.role == TraceEvent::Backward;
          const int mb = pass ? s.computed[e.role == TraceEvent::Backward]++ : -1;
          const auto kind = e.role == TraceEvent::Forward    ? TimelineBar::Forward
                            : e.role == TraceEvent::Backward ? TimelineBar::Backward
                            : e.role == TraceEvent::Update   ? TimelineBar::Update
                                                             : TimelineBar::Compute;
          addBar(out, i, {kind, TimelineBar::None, before, s.clock, mb});
          addWallBar(out, i, e, kind, mb);
        }
      } else if (isSend(e.kind)) {
        LinkSide& l = links[linkOf(lane, e.kind)];
        s.clock += e.seconds * codec.encode;
        double& wire = model.shared_egress ? s.egress : l.busy_until;
        const double leave = std::max(s.clock, wire);
        const double arrival = model.queue(s.clock, e.bytes, wire);
        int index = -1;
        if (out) {
          const auto [boundary, direction, replica] = linkOf(lane, e.kind);
          TimelineMessage m;
          m.boundary = boundary, m.forward = direction == 0, m.replica = replica;
          m.microbatch = s.sent[direction]++;
          m.from = i, m.ready = s.clock, m.leave = leave, m.wire_end = wire, m.arrival = arrival;
          m.encode_s = e.seconds * codec.encode, m.bytes = e.bytes, m.dense = e.dense;
          index = int(out->messages.size());
          out->messages.push_back(m);
          addBar(out, i, {TimelineBar::Encode, TimelineBar::None, before, s.clock, m.microbatch, index});
          addWallBar(out, i, e, TimelineBar::Encode, m.microbatch, index);
        }
        l.arrivals.push_back({arrival, index});
        for (size_t w : l.receivers) runnable.push_back(w);
        l.receivers.clear();
      } else if (isReceive(e.kind)) {
        LinkSide& l = links[linkOf(lane, e.kind)];
        if (l.arrivals.empty()) {  // its sender has not got there yet: woken by the send
          l.receivers.push_back(i);
          break;
        }
        const auto [arrival, index] = l.arrivals.front();
        const double begin = std::max(s.clock, arrival);
        s.clock = begin + e.seconds * codec.decode;
        l.arrivals.pop_front();
        if (out) {
          TimelineMessage& m = out->messages[size_t(index)];
          m.to = i, m.decode_s = e.seconds * codec.decode;
          s.received[forwardMessage(e.kind) ? 0 : 1]++;
          const auto cause = m.ready <= before    ? TimelineBar::Link
                             : forwardMessage(e.kind) ? TimelineBar::Activation
                                                      : TimelineBar::Gradient;
          addBar(out, i, {TimelineBar::Idle, cause, before, begin, m.microbatch, index});
          addBar(out, i, {TimelineBar::Decode, TimelineBar::None, begin, s.clock, m.microbatch, index});
          addWallBar(out, i, e, TimelineBar::Decode, m.microbatch, index);
        }
      } else {  // an exchange: this replica's encode (or arithmetic), then the group's once the last replica is there
        s.clock += e.kind == TraceEvent::ExchangeCompressed ? e.seconds * codec.encode : e.seconds;
        addBar(out, i, {TimelineBar::Encode, TimelineBar::None, before, s.clock});
        addWallBar(out, i, e, TimelineBar::Encode);
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
      stuck +=
          (stuck.empty() ? "" : ", ") + traceLaneName(lanes[i]) + " waits at event " + std::to_string(state[i].next);
  if (waiting > 4) stuck += " and " + std::to_string(waiting - 4) + " more";
  if (!stuck.empty())
    throw TraceError("the step's trace does not fit together: " + stuck +
                     ", for messages or an exchange no other stage provides");
  double emulated = 0;
  for (const Lane& s : state) emulated = std::max(emulated, s.clock);
  if (out) {
    out->step_s = emulated;
    for (size_t i = 0; i < lanes.size(); ++i) {
      out->lanes[i].busy_until = state[i].clock;
      addBar(out, i, {TimelineBar::Idle, TimelineBar::StepEnd, state[i].clock, emulated});
      out->microbatches = std::max({out->microbatches, state[i].computed[0], state[i].sent[0], state[i].received[0]});
    }
  }
  return emulated;
}

}  // namespace

double replay(const StepTrace& trace, const LinkModel& model) {
  return simulate(trace, model, CodecScale{}, nullptr);
}

const StepTrace& medianStep(const std::vector<StepTrace>& steps) {
  if (steps.empty()) throw std::invalid_argument("median step: no steps");
  std::vector<std::pair<double, size_t>> times;
  for (size_t i = 0; i < steps.size(); ++i) times.push_back({replay(steps[i]), i});
  const auto middle = times.begin() + (times.size() - 1) / 2;
  std::nth_element(times.begin(), middle, times.end());
  return steps[middle->second];
}

Timeline timelineOf(const StepTrace& trace, const LinkModel& model, const CodecScale& codec, bool stagesBubble) {
  Timeline t;
  simulate(trace, model, codec, &t);
  if (!stagesBubble) return t;
  if (const auto even = evenPasses(trace)) {
    LinkModel free;
    free.bandwidth_mbps = 1e12;
    Timeline ideal;
    simulate(*even, free, {}, &ideal);
    t.stages_bubble = bubbleOf(ideal);
  }
  return t;
}

std::optional<StepTrace> evenPasses(const StepTrace& step) {
  StepTrace out = step;
  for (auto& lane : out.lanes) {
    double sum[4] = {}, count[4] = {};
    for (const auto& e : lane.events) {
      if (e.kind != TraceEvent::Compute) continue;
      if (e.role == TraceEvent::Unknown) return std::nullopt;
      sum[e.role] += e.seconds, count[e.role] += 1;
    }
    for (auto& e : lane.events)
      if (e.kind == TraceEvent::Compute && e.role != TraceEvent::Update) e.seconds = sum[e.role] / count[e.role];
  }
  return out;
}

std::string linkDirectionName(const LinkDirection& d) {
  return "boundary " + std::to_string(d.boundary) + (d.forward ? " fwd" : " bwd");
}

std::map<LinkDirection, MessageCost> meanMessageCosts(const StepTrace& step) {
  struct Sum {
    MessageCost cost;
    int sent = 0, received = 0;
  };
  std::map<LinkDirection, Sum> sums;
  for (const auto& lane : step.lanes)
    for (const auto& e : lane.events) {
      if (!isSend(e.kind) && !isReceive(e.kind)) continue;
      const auto [boundary, direction, replica] = linkOf(lane, e.kind);
      Sum& s = sums[{boundary, direction == 0}];
      if (isSend(e.kind))
        s.cost.encode_s += e.seconds, s.cost.bytes += double(e.bytes), s.sent += 1;
      else
        s.cost.decode_s += e.seconds, s.received += 1;
    }
  std::map<LinkDirection, MessageCost> out;
  for (auto& [d, s] : sums) {
    if (s.sent) s.cost.encode_s /= s.sent, s.cost.bytes /= s.sent;
    if (s.received) s.cost.decode_s /= s.received;
    out[d] = s.cost;
  }
  return out;
}

StepTrace withMessageCosts(const StepTrace& step, const std::map<LinkDirection, MessageCost>& costs) {
  StepTrace out = step;
  for (auto& lane : out.lanes)
    for (auto& e : lane.events) {
      if (!isSend(e.kind) && !isReceive(e.kind)) continue;
      const auto [boundary, direction, replica] = linkOf(lane, e.kind);
      const auto it = costs.find({boundary, direction == 0});
      if (it == costs.end()) continue;
      if (isSend(e.kind)) {
        e.seconds = it->second.encode_s;
        e.bytes = uint64_t(std::llround(it->second.bytes));
      } else {
        e.seconds = it->second.decode_s;
      }
    }
  return out;
}

const char* barKindName(TimelineBar::Kind k) {
  static const char* const names[] = {"forward", "backward", "update", "compute", "encode", "decode", "exchange", "idle"};
  return names[k];
}

const char* barCauseName(TimelineBar::Cause c) {
  static const char* const names[] = {"", "activation", "gradient", "link", "replicas", "step end"};
  return names[c];
}

}  // namespace ps
