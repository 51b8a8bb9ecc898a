#include "app/cli/PlanCommand.h"

#include "engine/core/AtomicFile.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/PresetSearch.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/Planner.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace ps::cli {
namespace {

using nlohmann::json;

// One number through a printf format: "%g" Mbit/s, "%.2f ms".
std::string printed(const char* format, double v) {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}
std::string ms(double seconds) {
  return printed("%.2f ms", 1000 * seconds);
}

// The preset as given, with the command line's settings and network over it (validated by the caller).
json presetOf(const PlanOptions& o) {
  auto j = readJsonFile(resolvePreset(o.preset));
  for (const auto& s : o.sets) applyOverride(j, s);
  if (o.bandwidth) setConfigValue(j, "link.bandwidth_mbps", *o.bandwidth);
  if (o.latency) setConfigValue(j, "link.latency_ms", *o.latency);
  if (!o.egress.empty()) setConfigValue(j, "link.egress", o.egress);
  return j;
}

}  // namespace

void addPlanCommand(CLI::App& app, PlanOptions& o) {
  auto* cmd = app.add_subcommand(
      "plan",
      "Plan what each link direction of a preset sends on a network: profile, measure codecs on its own "
      "tensors, weigh them by finished runs, search the fastest plan to the target");
  cmd->add_option("--preset", o.preset, "preset name or file to plan for")->required();
  cmd->add_option("--bandwidth", o.bandwidth, "the network's Mbit/s (default: the preset's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--latency", o.latency, "its latency in ms (default: the preset's)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--egress", o.egress, "link: a wire per link direction; stage: one interface per stage")
      ->check(CLI::IsMember({"link", "stage"}));
  cmd->add_option("--accuracy-budget", o.accuracyBudget,
                  "points of final accuracy the plan may lose against dense, by the store's runs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--error-budget", o.errorBudget,
                  "the most relative error a setting no finished run vouches for may have")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--tie-tolerance", o.tieTolerance,
                  "predicted times within this fraction of the fastest tie; the tie goes to the plan resting least "
                  "on error alone")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--store", o.store, "run store whose finished runs are the accuracy evidence (default: the lab's)");
  cmd->add_option("--steps", o.steps, "uncompressed steps to profile")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--samples", o.samples, "messages per link direction to measure codecs on")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--set", o.sets, "KEY=VALUE over the preset before planning (repeatable)");
  cmd->add_option("-o,--output", o.output, "write the planned preset here (refuses to replace a file)");
  cmd->add_flag("--json", o.json, "print the plan as JSON");
}

int runPlan(const PlanOptions& o) {
  PlanRequest request;
  request.preset = presetOf(o);
  request.name = o.preset;
  if (!o.output.empty() && std::filesystem::exists(o.output))
    throw ConfigError(o.output + " exists; plan writes a new preset, so give another path or remove it");
  request.accuracy_budget = o.accuracyBudget, request.error_budget = o.errorBudget;
  request.tie_tolerance = o.tieTolerance;
  request.store = o.store.empty() ? RunStore::defaultPath() : o.store;
  request.steps = o.steps, request.samples = o.samples;
  const PlanOutcome plan = planLinks(request);
  if (!o.output.empty()) AtomicFile::write(o.output, plan.planned.dump(2) + "\n");

  json out = plan.toJson();
  out["preset"] = o.preset;
  out["output"] = o.output.empty() ? json(nullptr) : json(o.output);
  if (o.json) {
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::printf("plan for %s at %g Mbit/s, %g ms latency; accuracy budget %g points, error budget %g\n", o.preset.c_str(),
              plan.network.bandwidth_mbps, plan.network.latency_ms, o.accuracyBudget, o.errorBudget);
  std::printf("%-16s %-24s %12s %10s %10s %9s  %s\n", "direction", "setting", "bytes/msg", "encode", "decode",
              "rel.err", "evidence");
  for (const auto& e : out["directions"]) {
    std::string ev = e["evidence"].is_array() ? "runs " + e["evidence"].dump() : e["evidence"].get<std::string>();
    if (const double share = e["float32_share"].get<double>(); share > 0)  // AQ-SGD's first epochs
      ev += "; float32 for " + std::to_string(int(std::lround(100 * share))) + "% of its steps";
    std::printf("%-16s %-24s %12.0f %10s %10s %9.4f  %s\n", e["direction"].get<std::string>().c_str(),
                e["setting"].get<std::string>().c_str(), e["bytes"].get<double>(),
                ms(e["encode_s"].get<double>()).c_str(), ms(e["decode_s"].get<double>()).c_str(),
                e["relative_error"].get<double>(), ev.c_str());
  }
  std::printf("predicted step %s against %s uncompressed; time to target %.3f x dense", ms(plan.best.step_s).c_str(),
              ms(plan.dense.step_s).c_str(), plan.best.time_factor() / plan.dense.time_factor());
  if (plan.uniform)
    std::printf(", %.3f x the best uniform setting (%s)", plan.best.time_factor() / plan.uniform->time_factor(),
                plan.uniform_setting.c_str());
  if (plan.best.fastest < plan.best.time_factor() * (1 - 1e-9))
    std::printf(
        "\nthe fastest assignment is predicted %.1f%% sooner, within the %g%% the model cannot tell apart: "
        "this plan rests less on error alone (summed relative error %.4f)",
        100 * (1 - plan.best.fastest / plan.best.time_factor()), 100 * o.tieTolerance, plan.best.risk);
  std::printf("\nsearch: %zu replays, %s; %.1f s in all\n", plan.best.evaluated,
              plan.best.optimal ? "proved optimal" : "stopped at its limit (not proved optimal)", plan.seconds);
  if (!o.output.empty()) std::printf("wrote %s\n", o.output.c_str());
  return 0;
}

}  // namespace ps::cli
