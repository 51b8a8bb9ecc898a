#pragma once
// Steps as the stage workers record them, built by hand for tests of what reads traces (timelines, re-timing, the
// planner): S stages, M micro-batches, GPipe or 1F1B, every pass and message alike unless a test changes one.
#include "engine/core/StepTrace.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ps::test {

struct Shape {
  int stages = 4, microbatches = 8;
  bool oneFOneB = false;
  double forward = 1.0 / 1024, backward = 2.0 / 1024, update = 0.5 / 1024;  // seconds; exact in binary
  double encode = 0, decode = 0;
  uint64_t bytes = 1000, dense = 4000;
  LinkModel model{1e9, 0};
};

// The order in which a stage runs its micro-batches' passes: GPipe (every forward, then every backward) or 1F1B.
inline std::vector<std::pair<bool, int>> passes(int stage, const Shape& s) {
  std::vector<std::pair<bool, int>> out;  // (forward, micro-batch)
  if (!s.oneFOneB) {
    for (int m = 0; m < s.microbatches; ++m) out.push_back({true, m});
    for (int m = 0; m < s.microbatches; ++m) out.push_back({false, m});
    return out;
  }
  int f = 0, b = 0;
  for (; f < std::min(s.stages - stage - 1, s.microbatches); ++f) out.push_back({true, f});
  while (f < s.microbatches) out.push_back({true, f++}), out.push_back({false, b++});
  while (b < s.microbatches) out.push_back({false, b++});
  return out;
}

inline TraceEvent ev(TraceEvent::Kind k, double seconds, uint64_t bytes = 0, uint64_t dense = 0,
                     TraceEvent::Role role = TraceEvent::Unknown) {
  TraceEvent e;
  e.kind = k, e.seconds = seconds, e.bytes = bytes, e.dense = dense, e.role = role;
  return e;
}

// A step as the stage workers record it: per pass, the receive, the compute and the send; then the optimizer step.
inline StepTrace pipelineTrace(const Shape& s) {
  StepTrace t;
  t.model = s.model;
  for (int stage = 0; stage < s.stages; ++stage) {
    TraceLane lane;
    lane.stage = stage;
    const bool first = stage == 0, last = stage == s.stages - 1;
    for (const auto& [forward, m] : passes(stage, s)) {
      if (forward) {
        if (!first) lane.events.push_back(ev(TraceEvent::ReceiveForward, s.decode));
        lane.events.push_back(ev(TraceEvent::Compute, s.forward, 0, 0, TraceEvent::Forward));
        if (!last) lane.events.push_back(ev(TraceEvent::SendForward, s.encode, s.bytes, s.dense));
      } else {
        if (!last) lane.events.push_back(ev(TraceEvent::ReceiveBackward, s.decode));
        lane.events.push_back(ev(TraceEvent::Compute, s.backward, 0, 0, TraceEvent::Backward));
        if (!first) lane.events.push_back(ev(TraceEvent::SendBackward, s.encode, s.bytes, s.dense));
      }
    }
    lane.events.push_back(ev(TraceEvent::Compute, s.update, 0, 0, TraceEvent::Update));
    t.lanes.push_back(lane);
  }
  return t;
}

}  // namespace ps::test
