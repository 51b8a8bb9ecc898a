#include "engine/telemetry/TelemetryBus.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ps
