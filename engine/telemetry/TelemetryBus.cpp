#include "engine/telemetry/TelemetryBus.h"

#include <chrono>
#include <cstdio>
#include <exception>

namespace ps {

TelemetryBus::TelemetryBus() : thread_([this] { loop(); }) {}

TelemetryBus::~TelemetryBus() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void TelemetryBus::addSink(std::shared_ptr<TelemetrySink> sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  sinks_.push_back(std::move(sink));
}

void TelemetryBus::publish(Telemetry item) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(item));
    ++published_;
  }
  wake_.notify_one();
}

void TelemetryBus::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = published_;
  idle_.wait(lock, [&] { return delivered_ >= target; });
}

void TelemetryBus::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Wake at least four times a second so sinks can write out what they hold even when training is paused.
    wake_.wait_for(lock, std::chrono::milliseconds(250), [&] { return stopping_ || !queue_.empty(); });
    std::deque<Telemetry> batch;
    batch.swap(queue_);
    auto sinks = sinks_;
    lock.unlock();
    for (const auto& item : batch)
      for (const auto& sink : sinks) {
        try {
          sink->consume(item);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "pipesqueeze: a telemetry sink failed: %s\n", e.what());
        }
      }
    for (const auto& sink : sinks) {
      try {
        sink->flush();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "pipesqueeze: a telemetry sink failed to flush: %s\n", e.what());
      }
    }
    lock.lock();
    delivered_ += batch.size();
    idle_.notify_all();
    if (stopping_ && queue_.empty()) return;
  }
}

}  // namespace ps
