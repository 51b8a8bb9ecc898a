// What a step's time was made of: the bubble, the critical path and each link's codec bill (engine/core/Timeline.h).
#include "engine/core/Timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ps {
namespace {

std::string linkName(int boundary, bool forward) {
  return "link " + std::to_string(boundary) + (forward ? " fwd" : " bwd");
}

// Whether a bar is part of the micro-batches' work (not the exchange or the optimizer step that follow it).
bool pipelineWork(const TimelineBar& b, bool lastCompute) {
  switch (b.kind) {
    case TimelineBar::Forward:
    case TimelineBar::Backward:
    case TimelineBar::Decode:
      return true;
    case TimelineBar::Encode:
      return b.message >= 0;
    case TimelineBar::Compute:
      return !lastCompute;  // a trace without roles: every compute but the last (the optimizer step)
    default:
      return false;
  }
}

// The index of the bar of `lane` that ends at `t` (bars tile the lane, so ends only grow); -1 at 0.
int barEndingAt(const TimelineLane& lane, double t) {
  const auto it = std::upper_bound(lane.bars.begin(), lane.bars.end(), t,
                                   [](double v, const TimelineBar& b) { return v < b.end; });
  if (it == lane.bars.begin()) return -1;
  return int(it - lane.bars.begin()) - 1;
}

}  // namespace

double bubbleOf(const Timeline& t, double* window) {
  // Idle, or already at the exchange or the optimizer step while others still pass micro-batches on.
  std::vector<int> lastCompute(t.lanes.size(), -1);
  for (size_t l = 0; l < t.lanes.size(); ++l)
    for (int i = 0; i < int(t.lanes[l].bars.size()); ++i)
      if (t.lanes[l].bars[size_t(i)].kind == TimelineBar::Compute) lastCompute[l] = i;
  double pipeline = 0, work = 0;
  for (size_t l = 0; l < t.lanes.size(); ++l)
    for (int i = 0; i < int(t.lanes[l].bars.size()); ++i) {
      const auto& b = t.lanes[l].bars[size_t(i)];
      if (!pipelineWork(b, i == lastCompute[l])) continue;
      pipeline = std::max(pipeline, b.end);
      work += b.end - b.start;  // all of it lies in the window
    }
  if (window) *window = pipeline;
  return pipeline > 0 && !t.lanes.empty() ? 1.0 - work / (double(t.lanes.size()) * pipeline) : 0.0;
}

StepDecomposition decompose(const Timeline& t) {
  StepDecomposition d;
  d.step_s = t.step_s;
  d.bubble = bubbleOf(t, &d.pipeline_s);
  d.stages_bubble = t.stages_bubble;
  if (t.stages > 0 && t.microbatches > 0)
    d.ideal_bubble = double(t.stages - 1) / double(t.microbatches + t.stages - 1);

  // The critical path: from the lane that ends last, back along its bars; a wait for a message continues on the
  // message's wire and then its sender, a wait for the replicas on the replica that came last.
  std::map<std::string, StepDecomposition::Segment> path;
  auto credit = [&](const std::string& what, int stage, int boundary, bool forward, double seconds) {
    auto& s = path[what];
    s.what = what, s.stage = stage, s.boundary = boundary, s.forward = forward;
    s.seconds += seconds;
  };
  size_t lane = 0;
  for (size_t i = 0; i < t.lanes.size(); ++i)
    if (t.lanes[i].busy_until > t.lanes[lane].busy_until) lane = i;
  double at = t.lanes.empty() ? 0 : t.lanes[lane].busy_until;
  for (size_t guard = 0; at > 0 && guard < 16 * (t.messages.size() + 64) * (t.lanes.size() + 1); ++guard) {
    const TimelineLane& l = t.lanes[lane];
    const int i = barEndingAt(l, at);
    if (i < 0) break;
    const TimelineBar& b = l.bars[size_t(i)];
    const std::string who = "stage " + std::to_string(l.stage) +
                            (t.replicas > 1 ? " (replica " + std::to_string(l.replica) + ")" : std::string());
    if (b.kind != TimelineBar::Idle) {
      credit(who, l.stage, -1, true, at - b.start);
      at = b.start;
    } else if (b.message >= 0) {  // the message's sender, then its wire, set when this lane could go on
      const TimelineMessage& m = t.messages[size_t(b.message)];
      credit(linkName(m.boundary, m.forward) +
                 (t.replicas > 1 ? " (replica " + std::to_string(m.replica) + ")" : std::string()),
             -1, m.boundary, m.forward, m.arrival - m.ready);
      lane = m.from;
      at = m.ready;
    } else if (b.cause == TimelineBar::Replicas) {  // the replica whose own part ended when the exchange began
      bool found = false;
      for (size_t j = 0; j < t.lanes.size() && !found; ++j) {
        if (t.lanes[j].stage != l.stage || j == lane) continue;
        const int k = barEndingAt(t.lanes[j], b.end);
        if (k >= 0 && t.lanes[j].bars[size_t(k)].end == b.end && t.lanes[j].bars[size_t(k)].kind != TimelineBar::Idle)
          lane = j, found = true;
      }
      if (!found) {
        credit(who, l.stage, -1, true, at - b.start);
        at = b.start;
      }
    } else {
      credit(who, l.stage, -1, true, at - b.start);
      at = b.start;
    }
  }
  double onPath = 0, onLinks = 0;
  for (auto& [what, s] : path) {
    d.critical.push_back(s);
    onPath += s.seconds;
    if (s.stage < 0) onLinks += s.seconds;
  }
  d.critical_links_share = onPath > 0 ? onLinks / onPath : 0;
  std::sort(d.critical.begin(), d.critical.end(),
            [](const auto& a, const auto& b) { return a.seconds != b.seconds ? a.seconds > b.seconds : a.what < b.what; });
  for (size_t i = 0; i < d.critical.size() && i < 3; ++i) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", t.step_s > 0 ? 100.0 * d.critical[i].seconds / t.step_s : 0.0);
    d.critical_summary += (i ? ", " : "") + d.critical[i].what + pct;
  }

  // Each link direction's codec against the wire time it saved.
  std::map<std::pair<int, int>, StepDecomposition::LinkCost> costs;
  for (const auto& m : t.messages) {
    auto& c = costs[{m.boundary, m.forward ? 0 : 1}];
    c.boundary = m.boundary, c.forward = m.forward;
    c.messages += 1;
    c.bytes += m.bytes;
    c.dense += m.dense;
    c.codec_s += m.encode_s + m.decode_s;
    c.wire_s += t.model.transferSeconds(m.bytes);
    if (m.dense > 0) c.saved_s += t.model.transferSeconds(m.dense) - t.model.transferSeconds(m.bytes);
  }
  for (auto& [key, c] : costs) d.links.push_back(c);
  return d;
}

}  // namespace ps
