// The link model against a real, shaped network. The same preset (Fashion-MNIST, 2 and 4 stages) with dense links,
// TopK 10% and 4-bit activations / 8-bit gradients, at 100 Mbit/s and 1 Gbit/s, with 1 ms latency each way:
//   measured  one rank per test host (tools/netns-hosts.sh: network namespaces, veth, tc token bucket, netem or the
//             delay line for the latency), links in accounted mode (nothing waits for the model): rank 0's wall
//             time per step;
//   own model the same run's emulated step time (its measured compute and codec times, the modelled links);
//   1 process the same configuration in one process with accounted links: its emulated step time.
// Prints a table and one JSON array (medians over the steps after a warm-up). Needs root for the namespaces; says
// why and exits 0 where they cannot be made.
//   bench_links [--steps N] [--warmup W] [--stages 2,4] [--bandwidths 100,1000] [--latencies 1]
//               [--methods dense,topk10,quant4-8] [--set KEY=VALUE]... [--json FILE]
// --set goes to every run (parallel.transport=gloo measures the Gloo messages the streams replaced, say). The model
// sends each stage's messages through one interface (link.egress=stage), as the test hosts do.
// With --time-to-accuracy: the 4-stage preset on four test hosts at 100 Mbit/s (--bandwidths' first) and 1 ms
// (--latencies' first), E epochs
// (--epochs, default 3) of the first N training samples (--train-limit, default 9600; 0: all 60000) with dense, TopK
// 10%, 4-bit activations + 8-bit gradients and AQ-SGD (its preset: 4-bit activations after a dense first epoch): the
// training wall time until the evaluation reaches 90% of dense's final accuracy (evaluations left out; the time with
// them is printed beside it), and the speed-up over dense. --methods picks others: quant8 (8-bit both ways) and
// planned (what `pipesqueeze-cli plan` chooses per link direction for that network, from an empty store, or from the
// finished runs of --plan-store's, which vouch for settings by their accuracy; its prediction is printed beside the
// measurement). --target ACC takes that accuracy as the target instead (dense's final accuracy known from runs made
// before, say), and --stop-at-target then ends every run but the planned one at its first evaluation past it
// (eval.stop_at_accuracy), which is all their time to the target needs; the planned run trains to its end, since
// its final accuracy is part of what is judged.
#include "engine/runs/store/RunStore.h"
#include "tests/bench/BenchArgs.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kScript = "PIPESQUEEZE_NETDELAY=" + std::string(PIPESQUEEZE_NETDELAY) + " " +
                            std::string(PIPESQUEEZE_SOURCE_DIR) + "/tools/netns-hosts.sh";
const std::string kPreset = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/fashion-mnist-4stage.json";
// A test host has one interface, which its stage's activations and gradients share: the model is told so (a
// --set link.egress=link after it compares with a wire per link direction instead).
const std::string kEgress = " --set link.egress=stage";

const std::map<std::string, std::vector<std::string>> kMethods = {
    {"aqsgd",
     {"compression.forward.method=quantize", "compression.forward.bits=4", "compression.forward.feedback=aqsgd",
      "compression.backward.method=quantize", "compression.backward.bits=8", "compression.aqsgd_warmup_epochs=1"}},
    {"dense", {"compression.forward.method=none", "compression.backward.method=none"}},
    {"topk10",
     {"compression.forward.method=topk", "compression.forward.k=0.1", "compression.backward.method=topk",
      "compression.backward.k=0.1"}},
    {"quant4-8",
     {"compression.forward.method=quantize", "compression.forward.bits=4", "compression.backward.method=quantize",
      "compression.backward.bits=8"}},
    {"quant8",
     {"compression.forward.method=quantize", "compression.forward.bits=8", "compression.backward.method=quantize",
      "compression.backward.bits=8"}},
    {"planned", {}},  // what `pipesqueeze-cli plan` chooses per link direction for the network (--time-to-accuracy)
};

int shell(const std::string& command, std::string* out = nullptr) {
  FILE* p = ::popen(("(" + command + ") 2>&1").c_str(), "r");  // every part of a chain, not only its last
  if (!p) return -1;
  std::array<char, 4096> buf{};
  size_t n = 0;
  std::string text;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
  const int w = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The median of a per-step metric after the warm-up steps.
double medianOf(const std::string& store, const std::string& key, int warmup) {
  ps::RunStore s(store);
  const auto runs = s.listRuns();
  if (runs.empty()) return 0;
  std::vector<double> v;
  for (const auto& m : s.metrics(runs.front().id, key))
    if (m.key == key && m.step > warmup) v.push_back(m.value);
  return median(v);
}

// The delay line's counters at the end of a `run` (tools/netdelay): its longest hold of a packet and the CPU time it
// used on the cores the ranks share; negative where the hosts had no delay line (no latency, or netem).
struct DelayLine {
  double longestHoldMs = -1, cpuSeconds = -1;
};

DelayLine delayLineOf(const std::string& log) {
  DelayLine d;
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(longest hold ([0-9.]+) ms\), [0-9]+ dropped, ([0-9.]+) s of CPU)"))) {
    d.longestHoldMs = std::stod(m[1]);
    d.cpuSeconds = std::stod(m[2]);
  }
  return d;
}

std::string freshStore(const std::string& name) {
  const auto path =
      (fs::temp_directory_path() / ("pipesqueeze-bench-links-" + std::to_string(::getpid()) + "-" + name + ".sqlite"))
          .string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  return path;
}

// Evaluations of the run in `store` as (training wall seconds, accuracy): rank 0's wall time spent in training steps
// up to the evaluation, the evaluations themselves left out. A multi-process evaluation is an instrument, not part
// of what is compared: it sends every sample's float32 activations over the shaped links, so at 100 Mbit/s a dense
// evaluation of 2000 samples takes seconds and would otherwise weigh more than the training between two of them.
// The second curve is the same evaluations over the run's whole wall time, evaluations included.
struct Curves {
  std::vector<std::pair<double, double>> training, wall;
};

Curves accuracyOverTime(const std::string& store) {
  ps::RunStore s(store);
  Curves out;
  const auto runs = s.listRuns();
  if (runs.empty()) return out;
  std::vector<std::pair<int64_t, double>> steps;  // (step, its wall seconds), in step order
  for (const auto& m : s.metrics(runs.front().id, "time/step_s"))
    if (m.key == "time/step_s") steps.emplace_back(m.step, m.value);
  std::sort(steps.begin(), steps.end());
  size_t next = 0;
  double trained = 0;
  for (const auto& m : s.metrics(runs.front().id, "eval/accuracy")) {
    if (m.key != "eval/accuracy") continue;
    while (next < steps.size() && steps[next].first <= m.step) trained += steps[next++].second;
    out.training.emplace_back(trained, m.value);
    out.wall.emplace_back(m.wall_s, m.value);
  }
  return out;
}

double timeTo(const std::vector<std::pair<double, double>>& curve, double target) {  // -1: not reached
  double prevT = 0, prevA = 0;
  for (const auto& [t, a] : curve) {
    if (a >= target) return a == prevA ? t : prevT + (t - prevT) * (target - prevA) / (a - prevA);
    prevT = t, prevA = a;
  }
  return -1;
}

// The planner's plan for the test hosts' network (their stages share one interface each), from `evidence`'s runs, or
// from an empty store where it is empty (so every choice rests on measured error alone): the planned preset's path
// and what `plan --json` printed.
bool planFor(const std::string& bandwidth, const std::string& latency, const std::string& sets,
             const std::string& evidence, std::string* preset, json* plan) {
  *preset = freshStore("planned") + ".json";
  fs::remove(*preset);
  std::string log;
  std::fprintf(stderr, "bench_links: planning for %s Mbit/s, %s ms ...\n", bandwidth.c_str(), latency.c_str());
  if (shell(std::string(PIPESQUEEZE_CLI) + " plan --preset " + kPreset + " --bandwidth " + bandwidth + " --latency " +
                latency + " --egress stage --store " + (evidence.empty() ? freshStore("plan-evidence") : evidence) +
                sets + " -o " + *preset + " --json 2>/dev/null",
            &log) != 0) {
    std::printf("planning failed: %s\n", log.substr(log.size() > 300 ? log.size() - 300 : 0).c_str());
    return false;
  }
  const size_t line = log.rfind("\n{");  // the JSON is the last line
  *plan = json::parse(line == std::string::npos ? log : log.substr(line + 1), nullptr, false);
  if (plan->is_discarded() || !plan->contains("directions")) {
    std::printf("planning printed no plan: %s\n", log.substr(log.size() > 300 ? log.size() - 300 : 0).c_str());
    return false;
  }
  return true;
}

struct Target {
  double accuracy = 0;  // 0: 90% of dense's final accuracy
  bool stop = false;    // end every run but the planned one at its first evaluation past the target
};

int timeToAccuracy(const std::string& bandwidth, const std::string& latency, const std::string& epochs,
                   const std::string& trainLimit, const std::string& extra, const std::vector<std::string>& methods,
                   const std::string& evidence, const Target& given, const std::string& jsonPath) {
  const std::string cli = PIPESQUEEZE_CLI;
  json out = json::array();
  std::map<std::string, Curves> curves;
  std::map<std::string, double> steps;  // median training step, s
  json plan;
  // With --stop-at-target every run but the planned one ends at the target: its last accuracy is not a final one.
  const auto endsAtTarget = [&](const std::string& m) { return given.stop && m != "planned"; };
  const std::string shared =
      " --set pipeline.stages=4 --set train.epochs=" + epochs + " --set data.train_limit=" + trainLimit +
      " --set data.eval_limit=2000 --set eval.every_steps=50 --set telemetry.histogram_every=0" + extra;
  for (const auto& m : methods) {
    std::string preset = kPreset;
    if (m == "planned" && !planFor(bandwidth, latency, shared, evidence, &preset, &plan)) continue;
    std::string sets = shared + " --set link.bandwidth_mbps=" + bandwidth + " --set link.latency_ms=" + latency +
                       " --set link.mode=accounted";
    for (const auto& set : kMethods.at(m)) sets += " --set " + set;
    if (endsAtTarget(m)) sets += " --set eval.stop_at_accuracy=" + json(given.accuracy).dump();
    const auto store = freshStore("tta-" + m);
    std::fprintf(stderr, "bench_links: time to accuracy, %s ...\n", m.c_str());
    std::string log;
    if (shell(kScript + " run --hosts 4 --bandwidth " + bandwidth + " --latency " + latency + " --prefix psbl -- " +
                  cli + " train --preset " + preset + " --store " + store + sets,
              &log) != 0) {
      std::printf("%s failed: %s\n", m.c_str(), log.substr(log.size() > 300 ? log.size() - 300 : 0).c_str());
      continue;
    }
    curves[m] = accuracyOverTime(store);
    steps[m] = medianOf(store, "time/step_s", 5);
  }
  if (curves["dense"].training.empty()) {
    std::printf("bench_links: the dense run failed; nothing to compare against\n");
    return 1;
  }
  const double final = curves["dense"].training.back().second;
  const double target = given.accuracy > 0 ? given.accuracy : 0.9 * final;
  const double dense = timeTo(curves["dense"].training, target), denseWall = timeTo(curves["dense"].wall, target);
  char source[96];
  std::snprintf(source, sizeof source, given.accuracy > 0 ? "given" : "90%% of dense's final %.2f%%", 100 * final);
  std::printf(
      "\nbench_links: time to %.2f%% (%s), Fashion-MNIST 4 stages on 4 test hosts at %s Mbit/s and %s ms, %s epochs "
      "of %s samples\n"
      "training: rank 0's wall time in training steps until the evaluation reached it; with evaluations: the run's "
      "wall time, evaluations included%s\n",
      100 * target, source, bandwidth.c_str(), latency.c_str(), epochs.c_str(), trainLimit == "0" ? "all" : trainLimit.c_str(),
      given.stop ? "; every run but the planned one ended at the target (its last accuracy is there, not final)" : "");
  std::printf("%-10s %14s %10s %18s %10s %14s %10s\n", "method", "training", "speed-up", "with evaluations", "speed-up",
              given.stop ? "last accuracy" : "final accuracy", "step");
  for (const auto& m : methods) {
    if (curves[m].training.empty()) continue;
    const double t = timeTo(curves[m].training, target), wall = timeTo(curves[m].wall, target);
    const double speedup = t > 0 && dense > 0 ? dense / t : 0.0;
    const double wallSpeedup = wall > 0 && denseWall > 0 ? denseWall / wall : 0.0;
    std::printf("%-10s %12.1f s %9.2fx %16.1f s %9.2fx %13.2f%% %7.1f ms\n", m.c_str(), t, speedup, wall, wallSpeedup,
                100 * curves[m].training.back().second, 1000 * steps[m]);
    out.push_back({{"method", m},
                   {"time_to_target_s", t},
                   {"speedup_over_dense", speedup},
                   {"time_to_target_with_evaluations_s", wall},
                   {"speedup_with_evaluations", wallSpeedup},
                   {endsAtTarget(m) ? "accuracy_at_stop" : "final_accuracy", curves[m].training.back().second},
                   {"target", target},
                   {"bandwidth_mbps", std::stod(bandwidth)},
                   {"latency_ms", std::stod(latency)},
                   {"median_step_s", steps[m]}});
  }
  if (!plan.is_null()) {
    // The planner's prediction beside the measurement: its model of the hosts' step, and time to target over dense
    // (a setting without run evidence is taken to need dense's steps; one with evidence, the steps its runs needed).
    std::printf("\nplanned: ");
    for (const auto& d : plan["directions"])
      std::printf("%s %s (%s); ", d["direction"].get<std::string>().c_str(), d["setting"].get<std::string>().c_str(),
                  d["evidence"].is_array() ? ("runs " + d["evidence"].dump()).c_str()
                                           : d["evidence"].get<std::string>().c_str());
    std::printf(
        "\npredicted step %.1f ms against dense %.1f ms: %.2fx dense's time to target, %.3fx the best uniform "
        "setting (%s)\n",
        1000 * plan["step_s"].get<double>(), 1000 * plan["dense_step_s"].get<double>(),
        1 / plan["time_to_target_vs_dense"].get<double>(),
        plan["time_to_target_vs_best_uniform"].is_null() ? 0.0 : plan["time_to_target_vs_best_uniform"].get<double>(),
        plan["best_uniform"].is_null() ? "none" : plan["best_uniform"].get<std::string>().c_str());
    if (steps.count("planned") && steps.count("dense"))
      std::printf("measured step %.1f ms against dense %.1f ms (%.2fx)\n", 1000 * steps["planned"],
                  1000 * steps["dense"], steps["dense"] / steps["planned"]);
    out.push_back({{"plan", plan}});
  }
  std::printf("%s\n", out.dump().c_str());
  if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 40, warmup = 5;
  std::vector<std::string> stages{"2", "4"}, bandwidths{"100", "1000"}, latencies{"1"},
      methods{"dense", "topk10", "quant4-8"};
  std::string jsonPath, epochs = "3", trainLimit = "9600", extra, evidence;
  bool timeToTarget = false;
  Target target;
  std::vector<std::string> sets;
  CLI::App app{"Each method on test hosts joined by shaped real links, against the link model's prediction"};
  ps::bench::addCount(app, "--steps", steps, "measured steps per case");
  app.add_option("--warmup", warmup, "steps before measuring")->check(CLI::NonNegativeNumber)->capture_default_str();
  ps::bench::addList(app, "--stages", stages, "pipeline stages");
  ps::bench::addList(app, "--bandwidths", bandwidths, "link bandwidths, Mbit/s");
  ps::bench::addList(app, "--latencies", latencies, "link latencies, ms");
  ps::bench::addList(app, "--methods", methods,
                     "dense, topk10, quant4-8, quant8, aqsgd; planned with --time-to-accuracy");
  app.add_option("--set", sets, "KEY=VALUE for every run (repeatable)");
  app.add_option("--json", jsonPath, "also write the numbers to this file");
  app.add_flag("--time-to-accuracy", timeToTarget, "train to an accuracy instead of timing steps");
  app.add_option("--epochs", epochs, "epochs with --time-to-accuracy")->capture_default_str();
  app.add_option("--train-limit", trainLimit, "training samples with --time-to-accuracy")->capture_default_str();
  app.add_option("--plan-store", evidence,
                 "a run store whose finished runs the planner takes as evidence for 'planned' (default: none)")
      ->check(CLI::ExistingFile);
  auto* targetOption = app.add_option("--target", target.accuracy,
                                      "the accuracy to time runs to (default: 90% of dense's final accuracy)")
                           ->check(CLI::Range(1e-9, 1.0));
  app.add_flag("--stop-at-target", target.stop, "end every run but the planned one at the target (needs --target)")
      ->needs(targetOption);
  ps::bench::parse(app, argc, argv);
  for (const auto& s : sets) extra += " --set '" + s + "'";
  for (const auto& m : methods)
    if (!kMethods.count(m)) {
      std::fprintf(stderr, "bench_links: unknown method '%s' (dense, topk10, quant4-8, quant8, aqsgd, planned)\n",
                   m.c_str());
      return 2;
    }
  if (!timeToTarget && std::count(methods.begin(), methods.end(), "planned")) {
    std::fprintf(stderr, "bench_links: 'planned' is planned for one network: use it with --time-to-accuracy\n");
    return 2;
  }
  std::string why;
  if (::geteuid() != 0 || shell("ip netns add psbenchprobe && ip netns del psbenchprobe", &why) != 0) {
    std::printf("bench_links: skipped: test hosts need network namespaces (root, iproute2)%s%s\n",
                why.empty() ? "" : ": ", why.c_str());
    return 0;
  }
  for (const auto& l : latencies)
    if (l != "0") {  // netem or the delay line must be there: a latency the hosts do not have would be no comparison
      std::string why;
      if (shell(kScript + " up --hosts 1 --latency " + l + " --prefix psbl && " + kScript + " down --prefix psbl",
                &why) != 0) {
        std::printf("bench_links: the test hosts cannot be given a %s ms latency: %s\n", l.c_str(), why.c_str());
        return 1;
      }
    }
  if (timeToTarget)
    return timeToAccuracy(bandwidths.front(), latencies.front(), epochs, trainLimit, extra,
                          app.get_option("--methods")->count()
                              ? methods
                              : std::vector<std::string>{"dense", "topk10", "quant4-8", "aqsgd"},
                          evidence, target, jsonPath);

  const std::string cli = PIPESQUEEZE_CLI;
  json out = json::array();
  std::printf("\nbench_links: %s, %d steps (medians after %d), links accounted%s\n",
              fs::path(kPreset).filename().c_str(), steps, warmup, extra.c_str());
  std::printf("%-7s %-10s %-8s %-10s %12s %12s %8s %12s %8s %10s %10s %10s %10s\n", "stages", "bandwidth", "latency",
              "method", "measured", "own model", "ratio", "1 process", "ratio", "control", "MB/step", "line hold",
              "line CPU");
  for (const auto& s : stages)
    for (const auto& b : bandwidths)
      for (const auto& l : latencies)
        for (const auto& m : methods) {
          std::string sets =
              " --set pipeline.stages=" + s + " --set train.max_steps=" + std::to_string(steps) +
              " --set eval.every_steps=0 --set telemetry.histogram_every=0 --set link.bandwidth_mbps=" + b +
              " --set link.latency_ms=" + l + " --set link.mode=accounted" + kEgress + extra;
          for (const auto& set : kMethods.at(m)) sets += " --set " + set;
          const std::string name = s + "-" + b + "-" + l + "-" + m;
          const auto hosts = freshStore(name + "-hosts"), one = freshStore(name + "-one");
          std::fprintf(stderr, "bench_links: %s ...\n", name.c_str());
          std::string log, oneLog;
          const int a = shell(kScript + " run --hosts " + s + " --bandwidth " + b + " --latency " + l +
                                  " --prefix psbl -- " + cli + " train --preset " + kPreset + " --store " + hosts +
                                  sets,
                              &log);
          const int c = shell(cli + " train --preset " + kPreset + " --store " + one + sets, &oneLog);
          const DelayLine line = delayLineOf(log);
          if (a == 0) log = oneLog;  // the failure worth showing
          if (a != 0 || c != 0) {
            std::printf("%-7s %-10s %-8s %-10s failed (%d, %d): %s\n", s.c_str(), b.c_str(), l.c_str(), m.c_str(), a,
                        c, log.substr(log.size() > 300 ? log.size() - 300 : 0).c_str());
            continue;
          }
          const double measured = medianOf(hosts, "time/step_s", warmup);
          const double own = medianOf(hosts, "time/emulated_step_s", warmup);
          const double single = medianOf(one, "time/emulated_step_s", warmup);
          const double control = medianOf(hosts, "time/control_s", warmup);
          const double bytes = medianOf(hosts, "bytes/wire", warmup);
          // The delay line's CPU per training step (its whole run over the steps): time the ranks did not have.
          const double lineCpu = line.cpuSeconds >= 0 ? line.cpuSeconds / steps : -1;
          std::printf("%-7s %-10s %-8s %-10s %10.1f ms %10.1f ms %8.3f %10.1f ms %8.3f %7.1f ms %10.2f", s.c_str(),
                      (b + " Mb/s").c_str(), (l + " ms").c_str(), m.c_str(), 1e3 * measured, 1e3 * own, measured / own,
                      1e3 * single, measured / single, 1e3 * control, bytes / 1e6);
          if (line.cpuSeconds >= 0)
            std::printf(" %7.2f ms %7.1f ms\n", line.longestHoldMs, 1e3 * lineCpu);
          else
            std::printf(" %10s %10s\n", "-", "-");
          out.push_back({{"stages", std::stoi(s)},
                         {"bandwidth_mbps", std::stod(b)},
                         {"latency_ms", std::stod(l)},
                         {"method", m},
                         {"measured_step_s", measured},
                         {"own_model_step_s", own},
                         {"one_process_step_s", single},
                         {"control_s", control},
                         {"measured_over_own_model", measured / own},
                         {"measured_over_one_process", measured / single},
                         {"wire_bytes_per_step", bytes},
                         {"delay_line_longest_hold_ms", line.longestHoldMs},
                         {"delay_line_cpu_per_step_s", lineCpu}});
          for (const auto& f : {hosts, one})
            for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(f + suffix);
        }
  std::printf("%s\n", out.dump().c_str());
  if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  return 0;
}
