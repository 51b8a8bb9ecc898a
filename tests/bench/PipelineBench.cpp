// Engine throughput against a plain LibTorch training loop of the same model, data and threads, in one run.
//   bench_pipeline [--task fashion_mnist|brown_lm] [--steps N] [--rounds R] [--json FILE]
// Also: what keeping each step's schedule (its trace) costs a 4-stage step.
// Prints a table and one JSON object (last line). Ratios are engine / plain, so 1.0 means no overhead.
#include "engine/models/StageModule.h"
#include "engine/session/Session.h"
#include "engine/session/Threads.h"
#include "tests/bench/BenchArgs.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

namespace {

using namespace ps;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

Config benchConfig(const std::string& task, int stages, int steps) {
  json j = readJsonFile(presetDirectory() + (task == "brown_lm" ? "/brown-lm-4stage.json" : "/fashion-mnist-4stage.json"));
  j["pipeline"]["stages"] = stages;
  // One stage has no bubble to fill: it trains on the whole batch, as the plain loop does.
  if (stages == 1) j["pipeline"]["microbatches"] = 1;
  j["train"]["max_steps"] = steps;
  j["train"]["lr_schedule"] = "constant";
  j["eval"]["every_steps"] = 0;
  j["eval"]["max_batches"] = 1;
  return Config::fromJson(j);
}

// Samples per second of the engine, timed between the first and last step records (set-up and the
// final evaluation excluded, everything in the training loop included).
struct StepClock : TelemetrySink {
  double first = -1, last = 0;
  int64_t samples = 0, steps = 0;
  std::vector<std::shared_ptr<const StepTrace>> traces;  // what each step recorded of its schedule
  void consume(const Telemetry& t) override {
    if (auto s = std::get_if<StepRecord>(&t)) {
      if (first < 0) first = s->wall_s;
      else
        samples += s->samples, steps += 1;
      last = s->wall_s;
      if (s->trace) traces.push_back(s->trace);
    }
  }
};

struct EngineRun {
  double samples_per_s = 0, step_s = 0;
  std::vector<std::shared_ptr<const StepTrace>> traces;
};

EngineRun engineRun(const std::string& task, int stages, int steps) {
  Session session(benchConfig(task, stages, steps), nullptr);
  auto clock = std::make_shared<StepClock>();
  session.telemetry().addSink(clock);
  auto summary = session.run();
  if (summary["status"] != "finished") throw std::runtime_error("bench run ended " + summary["status"].dump());
  return {double(clock->samples) / (clock->last - clock->first), (clock->last - clock->first) / double(clock->steps),
          clock->traces};
}

double engineThroughput(const std::string& task, int stages, int steps) {
  return engineRun(task, stages, steps).samples_per_s;
}

// What keeping a step's schedule costs a step (the timeline, re-timing and trace export read it): each stage appending
// its events as it runs them, the step's lanes gathered into one trace, and its stored form encoded. Timed on the
// traces a run recorded, repeated; returns seconds per step for (recording, encoding) and the events per step.
struct RecordingCost {
  double record_s = 0, encode_s = 0, events = 0;
};
RecordingCost recordingCost(const std::vector<std::shared_ptr<const StepTrace>>& traces, int repeats) {
  RecordingCost c;
  if (traces.empty()) return c;
  size_t events = 0, sink = 0;
  const auto t0 = Clock::now();
  for (int r = 0; r < repeats; ++r)
    for (const auto& trace : traces) {
      StepTrace rebuilt;  // as the stage workers and the pipeline build it
      rebuilt.model = trace->model;
      for (const auto& lane : trace->lanes) {
        TraceLane mine;
        mine.stage = lane.stage, mine.replica = lane.replica;
        for (const auto& e : lane.events) mine.events.push_back(e);
        events += mine.events.size();
        rebuilt.lanes.push_back(std::move(mine));
      }
      sink += rebuilt.lanes.size();
    }
  const auto t1 = Clock::now();
  for (int r = 0; r < repeats; ++r)
    for (const auto& trace : traces) sink += encodeTrace(*trace).size();
  const auto t2 = Clock::now();
  const double n = double(repeats) * double(traces.size());
  c.record_s = std::chrono::duration<double>(t1 - t0).count() / n;
  c.encode_s = std::chrono::duration<double>(t2 - t1).count() / n;
  c.events = double(events) / n;
  if (sink == 0) std::printf("(nothing recorded)\n");  // keeps the work from being optimised away
  return c;
}

// The same model and data trained by hand: what a user would write without PipeSqueeze.
double plainThroughput(const std::string& task, int steps) {
  Config c = benchConfig(task, 1, steps);
  configureThreads(0, 1);
  TaskData data = loadTaskData(c);
  BlockModel model = buildModel(c, data.shape, c.train.seed);
  StageModule net(model, 0, model.size());
  torch::optim::AdamW adamw(net.parameters(), torch::optim::AdamWOptions(c.train.lr).weight_decay(c.train.weight_decay));
  torch::optim::Adam adam(net.parameters(), torch::optim::AdamOptions(c.train.lr));
  torch::optim::Optimizer& opt = c.train.optimizer == "adamw" ? static_cast<torch::optim::Optimizer&>(adamw) : adam;
  std::vector<int64_t> order(size_t(data.trainSize()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  const int64_t b = c.train.batch_size;
  Clock::time_point start;
  double seconds = 0;
  // On a fresh thread, as the engine's stage worker runs, so both start from the same OpenMP state.
  std::thread worker([&] {
    at::set_num_threads(hardwareThreads());
    for (int step = 0; step < steps; ++step) {
      if (step == 1) start = Clock::now();
      auto index = torch::from_blob(order.data() + step * b, {b}, torch::kInt64);
      auto x = data.train_x.index_select(0, index), y = data.train_y.index_select(0, index);
      auto loss = lossOf(model.kind, net.forward(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  });
  worker.join();
  return double((steps - 1) * b) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string task = "fashion_mnist", jsonPath;
  int steps = 60, rounds = 2;
  CLI::App app{"A plain LibTorch loop against the engine at 1, 2 and 4 stages: samples per second and ratios"};
  app.add_option("--task", task, "what to train")
      ->check(CLI::IsMember({"fashion_mnist", "brown_lm"}))
      ->capture_default_str();
  ps::bench::addCount(app, "--steps", steps, "steps per contender and round");
  ps::bench::addCount(app, "--rounds", rounds, "rounds, alternating the contenders; the best counts");
  app.add_option("--json", jsonPath, "also write the numbers to this file");
  ps::bench::parse(app, argc, argv);
  try {
    // Rounds alternate the contenders so drift in the machine's speed hits all of them; the best round counts.
    double plain = 0, s1 = 0, s2 = 0, s4 = 0;
    // A discarded warm-up: the first contender would otherwise also pay for growing the heap and faulting in
    // the data set's pages, which the later ones reuse.
    plainThroughput(task, 10);
    engineThroughput(task, 1, 10);
    EngineRun four;
    for (int r = 0; r < rounds; ++r) {
      plain = std::max(plain, plainThroughput(task, steps));
      s1 = std::max(s1, engineThroughput(task, 1, steps));
      s2 = std::max(s2, engineThroughput(task, 2, steps));
      EngineRun run = engineRun(task, 4, steps);
      if (run.samples_per_s > s4) s4 = run.samples_per_s, four = std::move(run);
    }
    const RecordingCost cost = recordingCost(four.traces, 200);
    std::printf("task %s, %d steps x %d rounds, %d cores\n", task.c_str(), steps, rounds, hardwareThreads());
    std::printf("%-22s %14s %10s\n", "contender", "samples/s", "ratio");
    std::printf("%-22s %14.1f %10.3f\n", "plain LibTorch loop", plain, 1.0);
    std::printf("%-22s %14.1f %10.3f\n", "engine, 1 stage", s1, s1 / plain);
    std::printf("%-22s %14.1f %10.3f\n", "engine, 2 stages", s2, s2 / plain);
    std::printf("%-22s %14.1f %10.3f\n", "engine, 4 stages", s4, s4 / plain);
    std::printf(
        "step trace, 4 stages: %.0f events, %.2f us to record, %.2f us to encode, a step %.2f ms: %.4f%% of it\n",
        cost.events, cost.record_s * 1e6, cost.encode_s * 1e6, four.step_s * 1e3,
        100 * (cost.record_s + cost.encode_s) / four.step_s);
    json out = {{"task", task},
                {"steps", steps},
                {"rounds", rounds},
                {"plain_samples_per_s", plain},
                {"engine1_samples_per_s", s1},
                {"engine2_samples_per_s", s2},
                {"engine4_samples_per_s", s4},
                {"ratio_1_stage", s1 / plain},
                {"ratio_2_stages", s2 / plain},
                {"ratio_4_stages", s4 / plain},
                {"target_ratio_1_stage", 0.95},
                {"trace_events_per_step", cost.events},
                {"trace_record_s", cost.record_s},
                {"trace_encode_s", cost.encode_s},
                {"step_s_4_stages", four.step_s},
                {"trace_share_of_step", (cost.record_s + cost.encode_s) / four.step_s},
                {"target_trace_share", 0.01}};
    std::printf("%s\n", out.dump().c_str());
    if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pipeline: %s\n", e.what());
    return 2;
  }
  return 0;
}
