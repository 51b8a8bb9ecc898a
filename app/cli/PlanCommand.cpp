#include "app/cli/PlanCommand.h"

#include "engine/core/AtomicFile.h"
#include "engine/errors/ConfigError.h"
#include "engine/plan/Evidence.h"
#include "engine/plan/PlanSearch.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/PresetSearch.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/PlanProfile.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace ps::cli {
namespace {

using nlohmann::json;

// The settings measured per link direction: float32; fp16; 2-, 4- and 8-bit quantization; TopK at five densities,
// and on activation gradients also with error feedback (activations are the forward pass's own values: a residual
// carried to the next micro-batch's activations would mix samples).
struct Setting {
  std::string name;  // "topk k=0.1 feedback=ef": the method, then the options the grid sets
  json spec;         // those options, as a preset writes them
  CompressionOptions options;
};

std::vector<Setting> gridFor(bool forward) {
  std::vector<std::vector<std::pair<std::string, json>>> settings = {{{"method", "none"}},
                                                                     {{"method", "quantize"}, {"bits", 16}}};
  for (int bits : {2, 4, 8}) settings.push_back({{"method", "quantize"}, {"bits", bits}});
  for (double k : {0.01, 0.05, 0.1, 0.2, 0.3}) {
    settings.push_back({{"method", "topk"}, {"k", k}});
    if (!forward) settings.push_back({{"method", "topk"}, {"k", k}, {"feedback", "ef"}});
  }
  std::vector<Setting> out;
  for (const auto& fields : settings) {
    Setting s;
    s.spec = json::object();
    for (const auto& [key, value] : fields) {
      s.spec[key] = value;
      s.name += (s.name.empty() ? "" : " ") + (key == "method" ? value.get<std::string>() : key + "=" + value.dump());
    }
    s.options = CompressionOptions::fromJson(s.spec);
    out.push_back(std::move(s));
  }
  return out;
}

// Steps of each setting's short run: one warms up, the median of the other five is the setting's step.
constexpr int kSettingSteps = 6;

// One number through a printf format: "%g" Mbit/s, "%.2f ms".
std::string printed(const char* format, double v) {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}
std::string ms(double seconds) {
  return printed("%.2f ms", 1000 * seconds);
}

struct Candidate {
  Setting setting;
  CandidateMeasure measure;
  const plan::Evidence* evidence = nullptr;  // the runs behind its accuracy, or null: its error alone
};

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
  const json preset = presetOf(o);
  const Config config = Config::fromJson(preset, o.preset);
  if (config.pipeline.stages < 2)
    throw ConfigError("the preset has one stage, so no link to plan; raise pipeline.stages");
  if (!o.output.empty() && std::filesystem::exists(o.output))
    throw ConfigError(o.output + " exists; plan writes a new preset, so give another path or remove it");
  const Config dense = withoutCompression(config);
  const auto start = std::chrono::steady_clock::now();
  const LinkProfile profile = profileLinks(dense, o.steps, o.samples);

  // No store yet is no evidence, not an error: every setting is then weighed by its error alone.
  const std::string storePath = o.store.empty() ? RunStore::defaultPath() : o.store;
  plan::EvidenceSet evidence;
  if (std::filesystem::exists(storePath)) {
    const RunStore store(storePath, RunStore::accessFor(storePath));
    evidence = plan::gatherEvidence(store, dense.json);
  }

  // Codec times where a run pays them (measureSetting()): a short run per setting, every boundary's activations and
  // gradients at once; on activations the setting is taken without its error feedback (the grid has none there).
  std::map<std::string, std::map<LinkDirection, MessageCost>> inRun;  // by the gradients' setting
  for (const auto& setting : gridFor(false)) {
    if (setting.options.method == "none") {
      inRun[setting.name] = meanMessageCosts(profile.step);
      continue;
    }
    json forward = setting.spec;
    forward.erase("feedback");
    inRun[setting.name] = measureSetting(dense, CompressionOptions::fromJson(forward), setting.options, kSettingSteps);
  }

  plan::Problem problem;
  problem.profiled = profile.step;
  problem.network = config.link;
  problem.accuracy_budget = o.accuracyBudget;
  problem.directions = plan::directionsOf(profile.step);
  std::vector<std::vector<Candidate>> candidates;
  for (const auto& direction : problem.directions) {
    const auto& tensors = profile.tensors.at(direction);
    const plan::Traffic traffic = direction.forward ? plan::Traffic::Activations : plan::Traffic::Gradients;
    std::vector<Candidate> kept;
    std::vector<plan::Option> options;
    for (const auto& setting : gridFor(direction.forward)) {
      Candidate c{setting, measureCandidate(setting.options, direction, tensors, profile.threads_per_stage), nullptr};
      c.measure.cost = inRun.at(setting.name).at(direction);  // the same bytes; the times a run has
      // The setting as a run of the whole preset would have it: that traffic compressed on every boundary.
      json asRun = dense.json;
      asRun["compression"][direction.forward ? "forward" : "backward"] = setting.options.toJson();
      const auto name = plan::settingOf(dense.json, Config::fromJson(asRun).json, nullptr);
      c.evidence = name && !name->empty() ? evidence.find(traffic, *name) : nullptr;
      plan::Option option{setting.name, c.measure.cost, 1, 0};
      if (setting.options.method == "none") {
        // dense itself
      } else if (c.evidence) {
        if (!c.evidence->steps_factor) continue;  // its runs never reached the target
        option.steps_factor = *c.evidence->steps_factor;
        option.accuracy_cost = std::max(0.0, c.evidence->accuracy_cost);
      } else if (c.measure.relative_error > o.errorBudget) {
        continue;  // no run vouches for it and its error is over the budget
      }
      options.push_back(option);
      kept.push_back(std::move(c));
    }
    problem.options.push_back(std::move(options));
    candidates.push_back(std::move(kept));
  }
  const plan::Plan best = plan::search(problem);
  const plan::Plan denseTime = plan::evaluate(problem, std::vector<size_t>(problem.directions.size(), 0));
  const std::optional<plan::Plan> uniform = plan::bestUniform(problem);  // the best setting on every direction
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The planned preset: the given one (with the command line's settings) with a setting per boundary and direction.
  json planned = preset;
  if (planned.contains("compression"))
    for (const char* key : {"forward", "backward", "boundaries"}) planned["compression"].erase(key);
  for (size_t d = 0; d < problem.directions.size(); ++d) {
    const auto& direction = problem.directions[d];
    planned["compression"]["boundaries"][std::to_string(direction.boundary)]
           [direction.forward ? "forward" : "backward"] = candidates[d][best.choice[d]].setting.spec;
  }
  planned["run"]["name"] = config.run.name + ", planned for " + printed("%g", config.link.bandwidth_mbps) + " Mbit/s";
  planned["run"]["tags"] = "planned";
  Config::fromJson(planned, "the planned preset");  // what is written must load
  if (!o.output.empty()) AtomicFile::write(o.output, planned.dump(2) + "\n");

  json directions = json::array();
  for (size_t d = 0; d < problem.directions.size(); ++d) {
    const Candidate& c = candidates[d][best.choice[d]];
    json e = {{"direction", linkDirectionName(problem.directions[d])},
              {"setting", c.setting.name},
              {"bytes", c.measure.cost.bytes},
              {"encode_s", c.measure.cost.encode_s},
              {"decode_s", c.measure.cost.decode_s},
              {"relative_error", c.measure.relative_error},
              {"evidence", c.setting.options.method == "none" ? json("dense")
                           : c.evidence                       ? json(c.evidence->runs)
                                                              : json("error only")}};
    directions.push_back(e);
  }
  const json out = {
      {"preset", o.preset},
      {"bandwidth_mbps", config.link.bandwidth_mbps},
      {"latency_ms", config.link.latency_ms},
      {"accuracy_budget", o.accuracyBudget},
      {"directions", directions},
      {"step_s", best.step_s},
      {"steps_factor", best.steps_factor},
      {"accuracy_cost", best.accuracy_cost},
      {"dense_step_s", denseTime.step_s},
      {"time_to_target_vs_dense", best.time_factor() / denseTime.time_factor()},
      {"best_uniform", uniform ? json(problem.options[0][uniform->choice[0]].setting) : json(nullptr)},
      {"time_to_target_vs_best_uniform", uniform ? json(best.time_factor() / uniform->time_factor()) : json(nullptr)},
      {"optimal", best.optimal},
      {"replays", best.evaluated},
      {"seconds", seconds},
      {"output", o.output.empty() ? json(nullptr) : json(o.output)}};
  if (o.json) {
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::printf("plan for %s at %g Mbit/s, %g ms latency; accuracy budget %g points, error budget %g\n", o.preset.c_str(),
              config.link.bandwidth_mbps, config.link.latency_ms, o.accuracyBudget, o.errorBudget);
  std::printf("%-16s %-24s %12s %10s %10s %9s  %s\n", "direction", "setting", "bytes/msg", "encode", "decode",
              "rel.err", "evidence");
  for (const auto& e : directions) {
    const std::string ev = e["evidence"].is_array() ? "runs " + e["evidence"].dump() : e["evidence"].get<std::string>();
    std::printf("%-16s %-24s %12.0f %10s %10s %9.4f  %s\n", e["direction"].get<std::string>().c_str(),
                e["setting"].get<std::string>().c_str(), e["bytes"].get<double>(),
                ms(e["encode_s"].get<double>()).c_str(), ms(e["decode_s"].get<double>()).c_str(),
                e["relative_error"].get<double>(), ev.c_str());
  }
  std::printf("predicted step %s against %s uncompressed; time to target %.3f x dense", ms(best.step_s).c_str(),
              ms(denseTime.step_s).c_str(), best.time_factor() / denseTime.time_factor());
  if (uniform)
    std::printf(", %.3f x the best uniform setting (%s)", best.time_factor() / uniform->time_factor(),
                problem.options[0][uniform->choice[0]].setting.c_str());
  std::printf("\nsearch: %zu replays, %s; %.1f s in all\n", best.evaluated,
              best.optimal ? "proved optimal" : "stopped at its limit (not proved optimal)", seconds);
  if (!o.output.empty()) std::printf("wrote %s\n", o.output.c_str());
  return 0;
}

}  // namespace ps::cli
