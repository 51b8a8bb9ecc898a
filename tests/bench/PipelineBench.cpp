// Engine throughput against a plain LibTorch training loop of the same model, data and threads, in one run.
//   bench_pipeline [--task fashion_mnist|brown_lm | --preset NAME] [--device cpu|cuda] [--stages 1,2,4] [--steps N]
//                  [--cpu-steps N] [--rounds R] [--against KEY=VALUE]... [--json FILE]
// On the GPU (--device cuda) the plain loop and the engine run there, and the engine also runs on the CPU for the
// GPU's speed-up; without a usable GPU it says why and exits 0. --against runs the engine once more per stage count
// with those settings, in the same rounds (first in every other round): what a setting buys, as a ratio
// (pipeline.stage_streams=false and pipeline.device_reads=message on a GPU: what stages on streams of their own with
// reads once a step bring).
// Also: what keeping each step's schedule (its trace) costs a step of the most stages asked for.
// Prints a table and one JSON object (last line). Ratios are engine / plain on the same device, so 1.0 means no
// overhead.
#include "engine/models/StageModule.h"
#include "engine/session/Session.h"
#include "engine/session/Threads.h"
#include "tests/bench/BenchArgs.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

namespace {

using namespace ps;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// What the bench trains: a preset by name, or the task's 4-stage preset.
struct Bench {
  std::string preset;
  std::string device = "cpu";
};

// Settings (KEY=VALUE) an engine run is made with.
using Settings = std::vector<std::string>;

std::string presetFor(const std::string& task) {
  return task == "brown_lm" ? "brown-lm-4stage" : "fashion-mnist-4stage";
}

Config benchConfig(const Bench& b, int stages, int steps, const std::string& device, const Settings& settings = {}) {
  json j = readJsonFile(presetDirectory() + "/" + b.preset + ".json");
  for (const auto& s : settings) applyOverride(j, s);
  j["pipeline"]["stages"] = stages;
  j["pipeline"]["device"] = device;
  j["pipeline"].erase("cuts");
  if (j["pipeline"].value("balance", "") == "explicit") j["pipeline"]["balance"] = "params";
  // One stage has no bubble to fill: it trains on the whole batch, as the plain loop does.
  if (stages == 1) j["pipeline"]["microbatches"] = 1;
  j["train"]["max_steps"] = steps;
  j["train"]["lr_schedule"] = "constant";
  j["eval"]["every_steps"] = 0;
  j["eval"]["max_batches"] = 1;
  return Config::fromJson(j, b.preset);
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

EngineRun engineRun(const Bench& b, int stages, int steps, const std::string& device, const Settings& settings = {}) {
  Session session(benchConfig(b, stages, steps, device, settings), nullptr);
  auto clock = std::make_shared<StepClock>();
  session.telemetry().addSink(clock);
  auto summary = session.run();
  if (summary["status"] != "finished") throw std::runtime_error("bench run ended " + summary["status"].dump());
  return {double(clock->samples) / (clock->last - clock->first), (clock->last - clock->first) / double(clock->steps),
          clock->traces};
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

// The same model and data trained by hand: what a user would write without PipeSqueeze, on the same device.
double plainThroughput(const Bench& b, int steps) {
  Config c = benchConfig(b, 1, steps, "cpu");
  configureThreads(0, 1);
  TaskData data = loadTaskData(c);
  BlockModel model = buildModel(c, data.shape, c.train.seed);
  StageModule net(model, 0, model.size());
  const torch::Device device(b.device == "cuda" ? torch::kCUDA : torch::kCPU);
  const bool cuda = device.is_cuda();
  net.to(device);  // in place: the optimisers below see the moved parameters
  torch::Tensor trainX = data.train_x.to(device), trainY = data.train_y.to(device);
  torch::optim::AdamW adamw(net.parameters(), torch::optim::AdamWOptions(c.train.lr).weight_decay(c.train.weight_decay));
  torch::optim::Adam adam(net.parameters(), torch::optim::AdamOptions(c.train.lr));
  torch::optim::Optimizer& opt = c.train.optimizer == "adamw" ? static_cast<torch::optim::Optimizer&>(adamw) : adam;
  std::vector<int64_t> order(size_t(data.trainSize()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  const int64_t batch = c.train.batch_size;
  if (int64_t(order.size()) < steps * batch)
    throw std::runtime_error(std::to_string(steps) + " steps of " + std::to_string(batch) + " need " +
                             std::to_string(steps * batch) + " training samples; the data has " +
                             std::to_string(order.size()) + ": ask for fewer --steps");
  torch::Tensor indices = torch::from_blob(order.data(), {int64_t(order.size())}, torch::kInt64).to(device);
  Clock::time_point start;
  double seconds = 0;
  // On a fresh thread, as the engine's stage worker runs, so both start from the same OpenMP state.
  std::thread worker([&] {
    at::set_num_threads(hardwareThreads());
    for (int step = 0; step < steps; ++step) {
      if (step == 1) {
        if (cuda) torch::cuda::synchronize();
        start = Clock::now();
      }
      auto index = indices.slice(0, step * batch, (step + 1) * batch);
      auto x = trainX.index_select(0, index), y = trainY.index_select(0, index);
      auto loss = lossOf(model.kind, net.forward(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    if (cuda) torch::cuda::synchronize();
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  });
  worker.join();
  return double((steps - 1) * batch) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string task = "fashion_mnist", jsonPath;
  Bench bench;
  Settings against;
  std::vector<int> stageCounts = {1, 2, 4};
  int steps = 60, cpuSteps = 0, rounds = 2;
  CLI::App app{"A plain LibTorch loop against the engine at 1, 2 and 4 stages: samples per second and ratios"};
  auto* taskOption = app.add_option("--task", task, "what to train (its 4-stage preset)")
                         ->check(CLI::IsMember({"fashion_mnist", "brown_lm"}))
                         ->capture_default_str();
  app.add_option("--preset", bench.preset, "train this bundled preset instead (fashion-mnist-gpu-resnet, say)")
      ->excludes(taskOption);
  app.add_option("--device", bench.device, "where the plain loop and the engine train")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--stages", stageCounts, "the engine's stage counts")
      ->delimiter(',')
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  ps::bench::addCount(app, "--steps", steps, "steps per contender and round");
  app.add_option("--cpu-steps", cpuSteps, "with --device cuda: steps of the engine on the CPU (default: --steps)")
      ->check(CLI::PositiveNumber);
  ps::bench::addCount(app, "--rounds", rounds, "rounds, alternating the contenders; the best counts");
  app.add_option("--against", against,
                 "also run the engine with this setting (KEY=VALUE, repeatable) and print its speed and the ratio of "
                 "the default's to it");
  app.add_option("--json", jsonPath, "also write the numbers to this file");
  ps::bench::parse(app, argc, argv);
  if (bench.preset.empty()) bench.preset = presetFor(task);
  if (cpuSteps == 0) cpuSteps = steps;
  if (steps < 2 || cpuSteps < 2) {
    std::fprintf(stderr, "bench_pipeline: --steps and --cpu-steps must be at least 2 (the first step is not timed)\n");
    return 2;
  }
  const bool gpu = bench.device == "cuda";
  if (gpu && !torch::cuda::is_available()) {
    std::printf(
        "bench_pipeline: no usable CUDA device (%s); nothing measured\n",
        at::hasCUDA() ? "this LibTorch has CUDA but sees no GPU or driver" : "this LibTorch was built without CUDA");
    return 0;
  }
  try {
    // Rounds alternate the contenders so drift in the machine's speed hits all of them; the best round counts.
    double plain = 0;
    std::vector<double> engine(stageCounts.size(), 0), cpu(stageCounts.size(), 0), other(stageCounts.size(), 0);
    // A discarded warm-up: the first contender would otherwise also pay for growing the heap and faulting in
    // the data set's pages (and, on a GPU, for its context and kernels), which the later ones reuse.
    plainThroughput(bench, 3);
    engineRun(bench, 1, 3, bench.device);
    EngineRun most;  // the run with the most stages, for what its traces cost
    const int mostStages = *std::max_element(stageCounts.begin(), stageCounts.end());
    for (int r = 0; r < rounds; ++r) {
      plain = std::max(plain, plainThroughput(bench, steps));
      for (size_t i = 0; i < stageCounts.size(); ++i) {
        // A run right after another of the same model is faster by up to a sixth here (the heap and caches are
        // warm): --against goes first in every other round, so that neither side always has the advantage.
        auto runAgainst = [&] {
          if (!against.empty())
            other[i] = std::max(other[i], engineRun(bench, stageCounts[i], steps, bench.device, against).samples_per_s);
        };
        if (r % 2 == 1) runAgainst();
        EngineRun run = engineRun(bench, stageCounts[i], steps, bench.device);
        engine[i] = std::max(engine[i], run.samples_per_s);
        if (stageCounts[i] == mostStages && run.samples_per_s >= engine[i]) most = std::move(run);
        if (gpu) cpu[i] = std::max(cpu[i], engineRun(bench, stageCounts[i], cpuSteps, "cpu").samples_per_s);
        if (r % 2 == 0) runAgainst();
      }
    }
    const RecordingCost cost = recordingCost(most.traces, 200);
    std::printf("preset %s on %s, %d steps x %d rounds, %d cores\n", bench.preset.c_str(), bench.device.c_str(), steps,
                rounds, hardwareThreads());
    std::printf("%-22s %14s %10s", "contender", "samples/s", "ratio");
    if (gpu) std::printf(" %14s %10s", "CPU samples/s", "GPU/CPU");
    if (!against.empty()) std::printf(" %14s %10s", "--against", "gain");
    std::printf("\n%-22s %14.1f %10.3f\n", "plain LibTorch loop", plain, 1.0);
    json rows = json::array();
    for (size_t i = 0; i < stageCounts.size(); ++i) {
      const std::string label =
          "engine, " + std::to_string(stageCounts[i]) + (stageCounts[i] == 1 ? " stage" : " stages");
      std::printf("%-22s %14.1f %10.3f", label.c_str(), engine[i], engine[i] / plain);
      json row = {{"stages", stageCounts[i]}, {"samples_per_s", engine[i]}, {"ratio_to_plain", engine[i] / plain}};
      if (gpu) {
        std::printf(" %14.1f %10.2f", cpu[i], engine[i] / cpu[i]);
        row["cpu_samples_per_s"] = cpu[i];
        row["gpu_over_cpu"] = engine[i] / cpu[i];
      }
      if (!against.empty()) {
        std::printf(" %14.1f %10.3f", other[i], engine[i] / other[i]);
        row["against_samples_per_s"] = other[i];
        row["gain_over_against"] = engine[i] / other[i];
      }
      std::printf("\n");
      rows.push_back(row);
    }
    std::printf(
        "step trace, %d stages: %.0f events, %.2f us to record, %.2f us to encode, a step %.2f ms: %.4f%% of it\n",
        mostStages, cost.events, cost.record_s * 1e6, cost.encode_s * 1e6, most.step_s * 1e3,
        100 * (cost.record_s + cost.encode_s) / most.step_s);
    json out = {{"preset", bench.preset},
                {"device", bench.device},
                {"steps", steps},
                {"rounds", rounds},
                {"plain_samples_per_s", plain},
                {"engine", rows},
                {"target_ratio_1_stage", bench.device == "cuda" ? 0.9 : 0.95},
                {"trace_stages", mostStages},
                {"trace_events_per_step", cost.events},
                {"trace_record_s", cost.record_s},
                {"trace_encode_s", cost.encode_s},
                {"step_s", most.step_s},
                {"trace_share_of_step", (cost.record_s + cost.encode_s) / most.step_s},
                {"target_trace_share", 0.01}};
    if (gpu) out["cpu_steps"] = cpuSteps;
    if (!against.empty()) out["against"] = against;
    if (!against.empty()) std::printf("--against: %s\n", json(against).dump().c_str());
    std::printf("%s\n", out.dump().c_str());
    if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pipeline: %s\n", e.what());
    return 2;
  }
  return 0;
}
