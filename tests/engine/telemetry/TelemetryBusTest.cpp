#include "engine/telemetry/TelemetryBus.h"

#include "engine/runs/store/RunStore.h"
#include "engine/session/RunStoreSink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace ps {
namespace {

struct Collector : TelemetrySink {
  std::vector<int64_t> steps;
  int flushes = 0;
  std::thread::id thread;
  void consume(const Telemetry& t) override {
    thread = std::this_thread::get_id();
    if (auto s = std::get_if<StepRecord>(&t)) steps.push_back(s->step);
  }
  void flush() override { ++flushes; }
};

struct Throwing : TelemetrySink {
  void consume(const Telemetry&) override { throw std::runtime_error("disk full"); }
};

TEST(TelemetryBus, DeliversEverythingInOrderToEverySinkOffTheCallingThread) {
  auto a = std::make_shared<Collector>(), b = std::make_shared<Collector>();
  TelemetryBus bus;
  bus.addSink(a);
  bus.addSink(std::make_shared<Throwing>());  // a failing sink does not starve the others
  bus.addSink(b);
  std::vector<std::thread> producers;
  for (int t = 0; t < 3; ++t)
    producers.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        StepRecord s;
        s.step = t * 1000 + i;
        bus.publish(s);
      }
    });
  for (auto& p : producers) p.join();
  bus.drain();
  ASSERT_EQ(a->steps.size(), 3000u);
  EXPECT_EQ(a->steps, b->steps);
  // Each producer's records keep their order.
  for (int t = 0; t < 3; ++t) {
    int64_t last = -1;
    for (int64_t s : a->steps)
      if (s / 1000 == t) EXPECT_GT(s, last), last = s;
  }
  EXPECT_NE(a->thread, std::this_thread::get_id());
  EXPECT_GT(a->flushes, 0);
}

TEST(TelemetryBus, FlushesPeriodicallyWhenIdle) {
  auto a = std::make_shared<Collector>();
  TelemetryBus bus;
  bus.addSink(a);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  bus.drain();
  EXPECT_GE(a->flushes, 2);
}

// A RunStore is used by one thread at a time, and the sink's thread writes the run's telemetry: a saved checkpoint
// reaches the store through its event, never from the session's thread beside the sink.
TEST(TelemetryBus, TheStoreSinkRecordsACheckpointFromItsEvent) {
  namespace fs = std::filesystem;
  const auto path = fs::temp_directory_path() / ("pipesqueeze-sink-" + std::to_string(::getpid()) + ".sqlite");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  auto store = std::make_shared<RunStore>(path.string());
  const int64_t id = store->createRun("sink", "{}", "test");
  {
    TelemetryBus bus;
    bus.addSink(std::make_shared<RunStoreSink>(store, id));
    bus.publish(EventRecord{40, 1.0, "checkpoint", nlohmann::json{{"path", "/data/run-1.pt"}}});
    // A multi-process run saves nothing: its event says why, and no checkpoint is recorded.
    bus.publish(EventRecord{41, 1.1, "checkpoint", nlohmann::json{{"skipped", "a multi-process run"}}});
    bus.publish(StatusRecord{id, "finished", "", nlohmann::json::object()});
    bus.drain();
  }
  const auto checkpoints = store->checkpoints(id);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].step, 40);
  EXPECT_EQ(checkpoints[0].path, "/data/run-1.pt");
  EXPECT_EQ(store->events(id).size(), 2u);
  store.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
}

}  // namespace
}  // namespace ps
