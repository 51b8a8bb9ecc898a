#pragma once
// A run store in a temporary folder with synthetic runs, for the runs UI tests.
//
// A run of N steps has, at step s = 1..N: train/loss 2/s, bytes/wire 1000 (so 1000*s sent by the end of step s),
// bytes/raw 4000, time/step_s 0.1, link0 and link1 fwd/bwd rel_error (fwd mean 0.2, bwd mean 0.3), wall_s 0.5*s,
// emulated_s 0.25*s; and every 5 steps eval/loss 1/s with eval/accuracy (or eval/perplexity for brown_lm).
#include "engine/core/StepTrace.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"

#include <QTemporaryDir>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ps::test {

inline nlohmann::json runConfig(double forwardK, const std::string& task = "fashion_mnist") {
  nlohmann::json c = Config::defaults().json;
  c["task"] = task;
  c["pipeline"]["stages"] = 3;
  c["pipeline"]["microbatches"] = 4;
  c["compression"]["forward"]["method"] = "topk";
  c["compression"]["forward"]["k"] = forwardK;
  c["compression"]["backward"]["method"] = "quantize";
  c["compression"]["backward"]["bits"] = 4;
  return Config::fromJson(c).json;  // validated, as a real run stores it
}

inline std::vector<MetricPoint> stepPoints(int64_t s, bool lm = false) {
  const double wall = 0.5 * double(s), em = 0.25 * double(s);
  std::vector<MetricPoint> m = {{s, "train/loss", 2.0 / double(s), wall, em},
                                {s, "bytes/wire", 1000, wall, em},
                                {s, "bytes/raw", 4000, wall, em},
                                {s, "time/step_s", 0.1, wall, em},
                                {s, "link0/fwd/rel_error", 0.1, wall, em},
                                {s, "link1/fwd/rel_error", 0.3, wall, em},
                                {s, "link0/bwd/rel_error", 0.2, wall, em},
                                {s, "link1/bwd/rel_error", 0.4, wall, em}};
  if (s % 5 == 0) {
    m.push_back({s, "eval/loss", 1.0 / double(s), wall, em});
    if (lm)
      m.push_back({s, "eval/perplexity", 100.0 / double(s), wall, em});
    else
      m.push_back({s, "eval/accuracy", 0.5 + 0.01 * double(s), wall, em});
  }
  return m;
}

struct TestStore {
  QTemporaryDir dir;
  std::shared_ptr<RunStore> store;

  TestStore() : store(std::make_shared<RunStore>((dir.path() + QStringLiteral("/runs.sqlite")).toStdString())) {}

  // A run with `steps` steps (see above) and the given events; finished unless `running`.
  int64_t addRun(const std::string& name, const nlohmann::json& config, int steps, bool running = false,
                 const std::vector<EventRow>& events = {}) {
    const bool lm = config.value("task", "") == "brown_lm";
    const int64_t id = store->createRun(name, config.dump(), "test");
    std::vector<MetricPoint> metrics;
    for (int s = 1; s <= steps; ++s)
      for (auto& p : stepPoints(s, lm)) metrics.push_back(p);
    store->append(id, metrics, events, {});
    if (!running) {
      nlohmann::json summary = {{"run_id", id},
                                {"status", "finished"},
                                {"steps", steps},
                                {"train_loss", 2.0 / steps},
                                {"eval_loss", 1.0 / steps},
                                {"bytes_raw", 4000.0 * steps},
                                {"bytes_wire", 1000.0 * steps},
                                {"wall_seconds", 0.5 * steps},
                                {"emulated_seconds", 0.25 * steps}};
      if (lm)
        summary["eval_perplexity"] = 100.0 / steps;
      else
        summary["eval_accuracy"] = 0.5 + 0.01 * steps;
      store->finishRun(id, "finished", "", summary.dump());
    }
    return id;
  }

  // Step traces for steps 1..steps that replay to the recorded 0.25 s per step at 100 Mbit/s: stage 0 computes
  // 0.125 s and sends 10 Mbit (0.1 s), stage 1 computes 0.025 s. At 50 Mbit/s a step takes 0.35 s.
  void addTraces(int64_t id, int steps) {
    std::vector<TraceRow> rows;
    for (int64_t step = 1; step <= steps; ++step) {
      StepTrace t;
      t.model.bandwidth_mbps = 100;
      TraceLane first{0, 0, {{TraceEvent::Compute, 0.125}, {TraceEvent::SendForward, 0, 0, 1250000}}};
      TraceLane second{1, 0, {{TraceEvent::ReceiveForward, 0}, {TraceEvent::Compute, 0.025}}};
      t.lanes = {first, second};
      rows.push_back({step, 0, encodeTrace(t)});
    }
    store->append(id, {}, {}, {}, rows);
  }
  // The same two stages with a codec on the link: 10 ms to encode a tenth of the bytes (10 ms on the wire) and 2 ms
  // to decode: 172 ms a step.
  void addCompressedTraces(int64_t id, int steps) {
    std::vector<TraceRow> rows;
    for (int64_t step = 1; step <= steps; ++step) {
      StepTrace t;
      t.model.bandwidth_mbps = 100;
      TraceLane first{0, 0, {{TraceEvent::Compute, 0.125}, {TraceEvent::SendForward, 0.01, 0, 125000}}};
      TraceLane second{1, 0, {{TraceEvent::ReceiveForward, 0.002}, {TraceEvent::Compute, 0.025}}};
      t.lanes = {first, second};
      rows.push_back({step, 0, encodeTrace(t)});
    }
    store->append(id, {}, {}, {}, rows);
  }
  // Three stages at 100 Mbit/s, no framing recorded: the middle one sends 1.25 MB back and then 1.25 MB on (0.1 s
  // each) and the last computes 25 ms after its message arrives. A wire per direction: 0.125 s a step; one interface
  // per stage: 0.225 s.
  void addTracesBothWays(int64_t id, int steps) {
    std::vector<TraceRow> rows;
    for (int64_t step = 1; step <= steps; ++step) {
      StepTrace t;
      t.model.bandwidth_mbps = 100;
      TraceLane first{0, 0, {{TraceEvent::ReceiveBackward, 0}}};
      TraceLane middle{1, 0, {{TraceEvent::SendBackward, 0, 0, 1250000}, {TraceEvent::SendForward, 0, 0, 1250000}}};
      TraceLane last{2, 0, {{TraceEvent::ReceiveForward, 0}, {TraceEvent::Compute, 0.025}}};
      t.lanes = {first, last, middle};  // the receivers first: they wait for the sender
      rows.push_back({step, 0, encodeTrace(t)});
    }
    store->append(id, {}, {}, {}, rows);
  }
};

inline EventRow settingEvent(int64_t step, const std::string& key, const nlohmann::json& from,
                             const nlohmann::json& to) {
  return {step, 0.5 * double(step), "setting", nlohmann::json{{"key", key}, {"from", from}, {"to", to}}.dump()};
}

// The compensation reset a change of compressor caused on one link.
inline EventRow resetEvent(int64_t step, int boundary, const std::string& direction) {
  return {step, 0.5 * double(step), "reset",
          nlohmann::json{{"boundary", boundary}, {"direction", direction}, {"reason", "the compressor changed"}}.dump()};
}

}  // namespace ps::test
