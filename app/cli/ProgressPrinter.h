#pragma once
// Shows a run's progress: a redrawn bar on a terminal, plain lines when piped, nothing with --json.
#include "engine/telemetry/TelemetryBus.h"

#include <chrono>
#include <cstdio>

namespace ps::cli {

class ProgressPrinter final : public TelemetrySink {
 public:
  ProgressPrinter(std::FILE* out, bool terminal);
  void consume(const Telemetry& item) override;

 private:
  void bar(const StepRecord& s);
  void line(const StepRecord& s);

  std::FILE* out_;
  bool terminal_;
  int64_t total_ = 0;  // from the run's start event
  double lossEma_ = 0;
  bool started_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
};

}  // namespace ps::cli
