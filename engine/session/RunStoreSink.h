#pragma once
// Writes a run's telemetry to the run store in batches, at most every half second, on the telemetry
// thread: training never waits on the disk, and a killed process loses at most the last batch. Once the sink is on
// the bus, the run's store instance belongs to the telemetry thread (a RunStore is used by one thread at a time):
// the session publishes what it wants recorded, checkpoints included, and never writes to the store itself.
//
// A store that refuses a write (its disk full, an I/O error, a damaged page) ends the recording: the sink says so
// once through `onFailure` (the session then fails the run at its next step), keeps nothing more, and only tries
// to mark the run failed when its end arrives. What was committed before stays readable.
#include "engine/runs/store/RunStore.h"
#include "engine/telemetry/TelemetryBus.h"

#include <chrono>
#include <functional>
#include <memory>

namespace ps {

class RunStoreSink final : public TelemetrySink {
 public:
  using FailureHandler = std::function<void(const std::string& why)>;
  RunStoreSink(std::shared_ptr<RunStore> store, int64_t runId, FailureHandler onFailure = {});
  void consume(const Telemetry& item) override;
  void flush() override;

 private:
  void write();
  void recordFailedEnd();  // after a failure: the run marked failed, if the store still takes that

  FailureHandler onFailure_;
  std::string failure_;  // the store's first refusal; empty while it takes every write
  std::shared_ptr<RunStore> store_;
  int64_t run_;
  std::vector<MetricPoint> metrics_;
  std::vector<EventRow> events_;
  std::vector<HistogramRow> histograms_;
  std::vector<TraceRow> traces_;
  std::vector<CheckpointRow> checkpoints_;
  std::optional<StatusRecord> final_;
  std::chrono::steady_clock::time_point lastWrite_ = std::chrono::steady_clock::now();
};

}  // namespace ps
