#pragma once
// Delivers telemetry from the training threads to sinks on one dispatcher thread, so a slow sink
// (a database, a terminal) never stalls training.
#include "engine/core/Telemetry.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ps {

class TelemetrySink {
 public:
  virtual ~TelemetrySink() = default;
  virtual void consume(const Telemetry& item) = 0;
  // Called after every batch of items and at least every 250 ms: the place to write batches out.
  virtual void flush() {}
};

class TelemetryBus {
 public:
  TelemetryBus();
  ~TelemetryBus();
  TelemetryBus(const TelemetryBus&) = delete;
  TelemetryBus& operator=(const TelemetryBus&) = delete;

  void addSink(std::shared_ptr<TelemetrySink> sink);  // before or during a run
  void publish(Telemetry item);                       // any thread, never blocks on sinks
  void drain();  // blocks until everything published so far has been consumed and flushed

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Telemetry> queue_;
  std::vector<std::shared_ptr<TelemetrySink>> sinks_;
  uint64_t published_ = 0, delivered_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ps
