// Data-parallel gradient compression on a hybrid pipeline, end to end: the same preset (Fashion-MNIST, 2 stages x 2
// replicas, 4 processes on loopback Gloo, links modelled at 100 Mbit/s) trained with dense all-reduce, TopK-SGD,
// GaussianK-SGD and GraVAC-adapted TopK-SGD, in one run of this program.
//   bench_scale [--preset NAME] [--epochs E] [--train-limit N] [--target ACC] [--set key=value ...] [--json FILE]
//               [--methods dense,gravac,...]  (a subset of the methods; dense is always run: it sets the target)
// Reports per method: bytes per epoch (all traffic, and the replicas' gradient exchange alone), emulated time per
// epoch, final accuracy, and the emulated time to reach the target accuracy (default: 98% of the dense run's
// final accuracy) with the speed-up over dense. Every run is a `pipesqueeze-cli launch`; numbers come from the run
// stores they leave.
#include "engine/runs/store/RunStore.h"
#include "tests/bench/BenchArgs.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Method {
  std::string name;
  std::vector<std::string> sets;
};

struct Result {
  std::string name;
  bool ok = false;
  double epochs = 0, wire = 0, gradWire = 0, gradRaw = 0, emulated = 0, wall = 0, accuracy = 0;
  std::vector<std::pair<double, double>> curve;  // (emulated seconds, eval accuracy)
  double timeTo(double target) const {           // linear between evaluations; -1 when never reached
    double prevT = 0, prevA = 0;
    for (const auto& [t, a] : curve) {
      if (a >= target) return a == prevA ? t : prevT + (t - prevT) * (target - prevA) / (a - prevA);
      prevT = t, prevA = a;
    }
    return -1;
  }
};

int run(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(PIPESQUEEZE_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execv(PIPESQUEEZE_CLI, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result measure(const Method& m, const std::string& preset, const std::vector<std::string>& common) {
  Result r;
  r.name = m.name;
  const std::string store =
      (fs::temp_directory_path() / ("pipesqueeze-bench-scale-" + std::to_string(::getpid()) + "-" + m.name + ".sqlite"))
          .string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(store + suffix);
  std::vector<std::string> args{"launch", "--preset", preset, "--store", store, "--name", "bench " + m.name};
  for (const auto& s : common) args.insert(args.end(), {"--set", s});
  for (const auto& s : m.sets) args.insert(args.end(), {"--set", s});
  std::fprintf(stderr, "bench_scale: %s ...\n", m.name.c_str());
  const int code = run(args);
  if (code != 0) {
    std::fprintf(stderr, "bench_scale: %s: pipesqueeze-cli exited with %d\n", m.name.c_str(), code);
    return r;
  }
  ps::RunStore s(store);
  const auto info = s.listRuns().front();
  const json summary = json::parse(info.summary_json);
  r.ok = summary.value("status", "") == "finished";
  r.wire = summary.value("bytes_wire", 0.0);
  r.emulated = summary.value("emulated_seconds", 0.0);
  r.wall = summary.value("wall_seconds", 0.0);
  r.accuracy = summary.value("eval_accuracy", 0.0);
  for (const auto& p : s.metrics(info.id)) {
    if (p.key.size() > 15 && p.key.find("/grad/wire_bytes") != std::string::npos) r.gradWire += p.value;
    if (p.key.size() > 14 && p.key.find("/grad/raw_bytes") != std::string::npos) r.gradRaw += p.value;
    if (p.key == "eval/accuracy") r.curve.emplace_back(p.emulated_s, p.value);
  }
  const json config = json::parse(info.config_json);
  const double samples = config["data"]["train_limit"].get<double>() > 0 ? config["data"]["train_limit"].get<double>()
                                                                           : 60000.0;
  const double steps = double(s.metrics(info.id, "train/loss").size());
  r.epochs = steps * config["train"]["batch_size"].get<double>() / samples;
  return r;
}

std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/fashion-mnist-hybrid.json", jsonPath;
  std::vector<std::string> common;
  double target = -1;
  std::string only;
  std::string epochs, trainLimit;
  std::vector<std::string> sets, asked;
  CLI::App app{"Data-parallel gradient compression at scale: bytes, accuracy and time to a target against dense"};
  app.add_option("--preset", preset, "the preset to train")->capture_default_str();
  app.add_option("--epochs", epochs, "train.epochs of every run");
  app.add_option("--train-limit", trainLimit, "data.train_limit of every run");
  app.add_option("--target", target, "target accuracy (default: 98% of the dense run's)");
  app.add_option("--set", sets, "KEY=VALUE for every run (repeatable)");
  app.add_option("--json", jsonPath, "also write the numbers to this file");
  ps::bench::addList(app, "--methods", asked, "only these methods beside dense");
  ps::bench::parse(app, argc, argv);
  if (!epochs.empty()) common.push_back("train.epochs=" + epochs);
  if (!trainLimit.empty()) common.push_back("data.train_limit=" + trainLimit);
  common.insert(common.end(), sets.begin(), sets.end());
  for (const auto& a : asked) only += "," + a;
  if (!only.empty()) only += ",";
  const std::vector<Method> methods = {
      {"dense", {"compression.gradients.method=none", "compression.gradients.feedback=none"}},
      {"topk-sgd-1%", {"compression.gradients.method=topk", "compression.gradients.k=0.01",
                       "compression.gradients.feedback=ef"}},
      {"gaussiank-sgd-1%", {"compression.gradients.method=gaussiank", "compression.gradients.k=0.01",
                            "compression.gradients.feedback=ef"}},
      {"powersgd-r4", {"compression.gradients.method=powersgd", "compression.gradients.rank=4",
                       "compression.gradients.feedback=ef"}},
      {"gravac", {"compression.gradients.method=topk", "compression.gradients.feedback=ef",
                  "compression.gradients.adapt=gravac", "compression.gradients.theta_min=0.1",
                  "compression.gradients.theta_max=0.001", "compression.gradients.window=25"}},
  };
  for (size_t at = 1; at < only.size();) {  // every name asked for must be one of the methods
    const size_t end = only.find(',', at);
    const std::string name = only.substr(at, end - at);
    at = end + 1;
    if (name.empty() || std::any_of(methods.begin(), methods.end(), [&](const Method& m) { return m.name == name; }))
      continue;
    std::string known;
    for (const auto& m : methods) known += (known.empty() ? "" : ", ") + m.name;
    std::fprintf(stderr, "bench_scale: no method is called '%s'; the methods are %s\n", name.c_str(), known.c_str());
    return 2;
  }
  std::vector<Result> results;
  for (const auto& m : methods)
    if (only.empty() || m.name == "dense" || only.find("," + m.name + ",") != std::string::npos)
      results.push_back(measure(m, preset, common));
  const Result& dense = results.front();
  if (!dense.ok) {
    std::fprintf(stderr, "bench_scale: the dense run failed; nothing to compare against\n");
    return 1;
  }
  if (target < 0) target = 0.98 * dense.accuracy;

  std::printf("\nbench_scale: %s, %.2f epochs, target accuracy %.2f%%\n", fs::path(preset).filename().c_str(),
              dense.epochs, 100 * target);
  std::printf("%-18s %14s %16s %14s %10s %12s %10s %9s\n", "method", "bytes/epoch", "grad bytes/epoch",
              "grad ratio", "emul s/ep", "accuracy", "t-to-acc", "speed-up");
  json out = json::array();
  const double denseTime = dense.timeTo(target);
  for (const auto& r : results) {
    if (!r.ok) {
      std::printf("%-18s failed\n", r.name.c_str());
      continue;
    }
    const double e = std::max(1e-9, r.epochs);
    const double t = r.timeTo(target);
    const double speedup = t > 0 && denseTime > 0 ? denseTime / t : 0;
    char tt[32], su[32];
    std::snprintf(tt, sizeof tt, t > 0 ? "%.1f s" : "not reached", t);
    std::snprintf(su, sizeof su, speedup > 0 ? "%.2fx" : "-", speedup);
    std::printf("%-18s %14s %16s %13.1fx %10.1f %11.2f%% %10s %9s\n", r.name.c_str(), mb(r.wire / e).c_str(),
                mb(r.gradWire / e).c_str(), r.gradWire > 0 ? r.gradRaw / r.gradWire : 0.0, r.emulated / e,
                100 * r.accuracy, tt, su);
    out.push_back({{"method", r.name}, {"epochs", r.epochs}, {"bytes_per_epoch", r.wire / e},
                   {"gradient_bytes_per_epoch", r.gradWire / e}, {"gradient_ratio", r.gradWire > 0 ? r.gradRaw / r.gradWire : 0.0},
                   {"emulated_s_per_epoch", r.emulated / e}, {"wall_s", r.wall}, {"accuracy", r.accuracy},
                   {"time_to_target_s", t}, {"speedup", speedup}, {"target", target}});
  }
  std::printf("(grad ratio: against a dense float32 ring all-reduce; emulated time models every link and the "
              "exchange at the preset's bandwidth)\n");
  std::printf("%s\n", out.dump().c_str());
  if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  return 0;
}
