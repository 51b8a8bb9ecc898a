#pragma once
// Where a run is: the step loop's position, how it ended, and the totals its summary reports. Torch-free.
#include "engine/core/RunSummary.h"
#include "engine/core/Telemetry.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace ps {

struct RunProgress {
  static constexpr size_t kRecentLosses = 50;  // the summary's training loss is their mean

  int64_t step = 0, epoch = 0;
  double emulated = 0;     // emulated seconds so far
  uint64_t raw = 0, wire = 0;  // every link's payload bytes so far, uncompressed and as sent
  std::deque<double> recentLoss;
  std::optional<EvalRecord> evalCompressed, evalPlain;
  std::string status = run_status::kRunning, reason;

  // Counts a trained step: its traffic into the totals, its loss among the recent ones; completes the record with
  // the sums it reports (codec and modelled link time, emulated time so far).
  void add(StepRecord& rec);
  // The run's summary. `headlineCompressed`: the headline evaluation is the compressed one (compression.inference).
  RunSummary summary(int64_t runId, bool classifier, bool headlineCompressed, double wallSeconds) const;
};

}  // namespace ps
