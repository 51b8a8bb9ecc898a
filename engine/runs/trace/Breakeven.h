#pragma once
// When does compression pay: saved runs re-timed for a range of bandwidths, each run's time to a target accuracy (or
// perplexity) at each, the winner per bandwidth, and per pair of a compressed run and an uncompressed one the
// bandwidths where the winner changes, found exactly by re-timing between the grid's points. Torch-free.
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct BreakevenOptions {
  std::vector<double> bandwidths{1, 3, 10, 30, 100, 300, 1000, 3000, 10000};  // Mbit/s, any order
  // The rest of the network at every bandwidth: latency, framing, egress (unset: each step's own; its bandwidth is
  // the grid's).
  RetimeNetwork network;
  // The target: an accuracy (a fraction, 0.85 for 85%) or, for language models, a perplexity; unset: `fraction` of
  // the final value of the uncompressed run (the first one given when there are several; the best final value of all
  // runs when none is uncompressed), as the claim suites set theirs. For perplexity the final value divided by it.
  std::optional<double> target;
  double fraction = 0.98;
};

struct BreakevenRun {
  int64_t id = 0;
  std::string name;
  bool dense = false;  // nothing compressed: every link direction and the replicas' gradients send float32
  std::optional<double> final_value;           // its last evaluation
  std::vector<std::optional<double>> seconds;  // time to target per bandwidth; unset: not reached
  std::string why;                             // why not reached ("not reached", "no evaluation", ...)
};

// A compressed run against an uncompressed one: the bandwidths at which the faster of the two changes, lowest
// first, each to 0.1% (between two grid points whose winners differ). `wins_below`: the highest bandwidth below
// which the compressed run is faster (it wins everywhere on the grid below it); unset when it wins at no grid point
// or at every one (`everywhere` says which).
struct BreakevenPair {
  int64_t method = 0, dense = 0;
  std::vector<double> crossings;
  std::optional<double> wins_below;
  bool everywhere = false, nowhere = false;
  std::string summary;  // one line: "run 3 beats run 1 below 412 Mbit/s"
};

struct BreakevenMap {
  std::string metric;  // eval/accuracy or eval/perplexity
  bool higher_is_better = true;
  double target = 0;
  std::string target_from;         // how the target was set ("98% of run 1's final eval/accuracy 0.884")
  std::vector<double> bandwidths;  // ascending
  RetimeNetwork network;           // as asked for, without a bandwidth
  std::vector<BreakevenRun> runs;  // in the order asked for
  std::vector<int> winner;         // per bandwidth: the index into `runs` of the fastest, -1 when none reached it
  std::vector<BreakevenPair> pairs;
};

// Throws StoreError for an unknown run, TraceError for a run without step traces (it cannot be re-timed), a damaged
// trace, a bandwidth that is not a positive number, or runs of different tasks (accuracy and perplexity do not
// share a target); naming what is wrong.
BreakevenMap breakevenMap(const RunStore& store, const std::vector<int64_t>& runIds, const BreakevenOptions& options);

// The pair in one line, each run named by `nameOf`: "A beats B below 412 Mbit/s", at every or at no bandwidth of
// `bandwidths` (the map's), or where the two trade places. What BreakevenPair::summary says with "run N" names.
std::string describePair(const BreakevenPair& pair, const std::vector<double>& bandwidths,
                         const std::function<std::string(int64_t)>& nameOf);

// Whether a run's settings (its config JSON) compress nothing: every link direction, boundary override and the
// replicas' gradients at method "none".
bool compressesNothing(const std::string& configJson);

}  // namespace ps
