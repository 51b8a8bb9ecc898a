#pragma once
// A saved run's emulated time at another network: its step traces replayed under another link model
// (engine/core/StepTrace.h). With nothing given it is the run's own network, step by step, and gives its
// recorded emulated time to the bit.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/StepTrace.h"
#include "engine/runs/store/RunStore.h"

namespace ps {

// The network to re-time for. A figure left out keeps what each step ran with.
struct RetimeNetwork {
  std::optional<double> bandwidth_mbps, latency_ms;
  std::optional<bool> tcp;  // the framing (LinkModel::tcp): TCP/IPv4 over Ethernet, or an ideal link
  std::optional<bool> shared_egress;  // LinkModel::shared_egress: one interface per stage, or a wire per direction
  // Nothing set: every step keeps the network it ran on, and nothing needs re-timing.
  bool empty() const { return !bandwidth_mbps && !latency_ms && !tcp && !shared_egress; }
  // The link model a step is replayed under.
  LinkModel applyTo(const LinkModel& recorded) const {
    LinkModel m = recorded;
    if (bandwidth_mbps) m.bandwidth_mbps = *bandwidth_mbps;
    if (latency_ms) m.latency_ms = *latency_ms;
    if (tcp) m.tcp = *tcp;
    if (shared_egress) m.shared_egress = *shared_egress;
    return m;
  }
  // Throws TraceError naming the figure that is not a network (bandwidth must be > 0, latency >= 0, both finite).
  void check() const;
};

struct RetimedRun {
  int64_t run_id = 0;
  double emulated_s = 0;           // the whole run at the chosen network
  double recorded_emulated_s = 0;  // the same steps as recorded
  int64_t steps = 0;
  std::vector<std::pair<int64_t, double>> epochs;  // (epoch, seconds the epoch's steps took), by epoch
  // Every evaluation: its step, the time it happened at the chosen network (the emulated time of the steps before
  // it) and as recorded, and its figures (eval/... keys).
  struct Evaluation {
    int64_t step = 0;
    double emulated_s = 0, recorded_emulated_s = 0;
    std::map<std::string, double> values;
  };
  std::vector<Evaluation> evaluations;
  // Every step: the emulated seconds at its end, at the chosen network and as recorded.
  struct StepTime {
    int64_t step = 0;
    double emulated_s = 0, recorded_emulated_s = 0;
  };
  std::vector<StepTime> cumulative;

  // The emulated seconds at the end of the last step at or before `step` (0 before the first): what a point
  // recorded at that step (a metric, an evaluation) reads at the chosen network.
  double emulatedAt(int64_t step) const;
};

// When a run's evaluation curve (`metricKey`: accuracy with `higherIsBetter`, perplexity without) first reaches
// `target`, in emulated seconds at the network (read between the evaluations around it, as the suites measure it):
// `seconds` is unset when it never does, with `why` saying so ("not reached", "no step traces" when the network
// asks for a re-timing the run cannot give).
struct TimeToTarget {
  std::optional<double> seconds;
  std::string why;
};
TimeToTarget timeToTarget(const RunStore& store, int64_t runId, const std::string& metricKey, double target,
                          bool higherIsBetter, const RetimeNetwork& network);

// Replays the stored traces of one run. Throws TraceError when the run has no traces (saved before they were kept)
// or one is damaged, naming the run and the step; StoreError for an unknown run.
RetimedRun retimeRun(const RunStore& store, int64_t runId, const RetimeNetwork& network);
// The same over traces already read (the app keeps them with a run's series).
RetimedRun retimeTraces(int64_t runId, const std::vector<TraceRow>& traces, const RetimeNetwork& network);

}  // namespace ps
