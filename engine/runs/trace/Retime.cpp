#include "engine/runs/trace/Retime.h"

#include "engine/runs/store/Reach.h"

#include <algorithm>
#include <cmath>

namespace ps {

double RetimedRun::emulatedAt(int64_t step) const {
  auto it = std::upper_bound(cumulative.begin(), cumulative.end(), step,
                             [](int64_t s, const StepTime& t) { return s < t.step; });
  return it == cumulative.begin() ? 0.0 : std::prev(it)->emulated_s;
}

void RetimeNetwork::check() const {
  if (bandwidth_mbps && !(std::isfinite(*bandwidth_mbps) && *bandwidth_mbps > 0))
    throw TraceError("the bandwidth must be a positive number of Mbit/s, not " + std::to_string(*bandwidth_mbps));
  if (latency_ms && !(std::isfinite(*latency_ms) && *latency_ms >= 0))
    throw TraceError("the latency must be a number of milliseconds, 0 or more, not " + std::to_string(*latency_ms));
}

RetimedRun retimeTraces(int64_t runId, const std::vector<TraceRow>& traces, const RetimeNetwork& network) {
  network.check();
  const std::string run = "run " + std::to_string(runId);
  if (traces.empty())
    throw TraceError(run +
                     " has no step traces: it was saved by a PipeSqueeze that did not keep them, or stopped "
                     "before its first step. Train it again to re-time it.");
  RetimedRun r;
  r.run_id = runId;
  r.cumulative.reserve(traces.size());
  for (const TraceRow& row : traces) {
    StepTrace t;
    double step = 0, recorded = 0;
    try {
      t = decodeTrace(row.trace);
      step = replay(t, network.applyTo(t.model));
      recorded = replay(t);
    } catch (const TraceError& e) {
      throw TraceError(run + ", step " + std::to_string(row.step) + ": " + e.what());
    }
    r.emulated_s += step;
    r.recorded_emulated_s += recorded;
    if (r.epochs.empty() || r.epochs.back().first != row.epoch) r.epochs.emplace_back(row.epoch, 0.0);
    r.epochs.back().second += step;
    r.cumulative.push_back({row.step, r.emulated_s, r.recorded_emulated_s});
    r.steps += 1;
  }
  return r;
}

RetimedRun retimeRun(const RunStore& store, int64_t runId, const RetimeNetwork& network) {
  RetimedRun r = retimeTraces(runId, store.traces(runId), network);
  // An evaluation happens after the steps before it: its time is the cumulative time at its step.
  size_t at = 0;
  RetimedRun::StepTime before;
  for (const MetricPoint& m : store.metrics(runId, "eval/")) {
    if (r.evaluations.empty() || r.evaluations.back().step != m.step) {
      RetimedRun::Evaluation e;
      e.step = m.step;
      while (at < r.cumulative.size() && r.cumulative[at].step <= m.step) before = r.cumulative[at++];
      e.emulated_s = before.emulated_s;
      e.recorded_emulated_s = before.recorded_emulated_s;
      r.evaluations.push_back(std::move(e));
    }
    r.evaluations.back().values[m.key] = m.value;
  }
  return r;
}

TimeToTarget timeToTarget(const RunStore& store, int64_t runId, const std::string& metricKey, double target,
                          bool higherIsBetter, const RetimeNetwork& network) {
  TimeToTarget out;
  std::vector<MetricPoint> curve;
  for (auto& m : store.metrics(runId, metricKey))
    if (m.key == metricKey && std::isfinite(m.value)) curve.push_back(std::move(m));
  const auto r = reach(curve, target, higherIsBetter, [](const MetricPoint& p) { return p.value; });
  if (!r) {
    out.why = curve.empty() ? "no evaluation" : "not reached";
    return out;
  }
  if (network.empty()) {
    out.seconds = r->read([](const MetricPoint& p) { return p.emulated_s; });
    return out;
  }
  const auto traces = store.traces(runId);
  if (traces.empty()) {
    out.why = "no step traces (saved before they were kept): cannot be re-timed";
    return out;
  }
  const RetimedRun retimed = retimeTraces(runId, traces, network);
  out.seconds = r->read([&](const MetricPoint& p) { return retimed.emulatedAt(p.step); });
  return out;
}

}  // namespace ps
