#include "engine/session/Planner.h"

#include "engine/errors/ConfigError.h"
#include "engine/plan/Evidence.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

namespace ps {
namespace {

using nlohmann::json;

// The settings measured per link direction: float32; fp16; 2-, 4- and 8-bit quantization; TopK at five densities;
// PowerSGD at rank 1 and 4; on activation gradients TopK and PowerSGD also with error feedback (activations are the
// forward pass's own values: a residual carried to the next micro-batch's activations would mix samples); and on
// activations AQ-SGD with 2- and 4-bit quantization of each sample's change (its own buffer per sample, not a
// residual shared between them).
struct Setting {
  std::string name;  // "topk k=0.1 feedback=ef"
  json spec;
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
  // Low rank: PowerSGD's factors of the message as a matrix (samples x the rest), warm-started from the last step's.
  for (int rank : {1, 4}) {
    settings.push_back({{"method", "powersgd"}, {"rank", rank}});
    if (!forward) settings.push_back({{"method", "powersgd"}, {"rank", rank}, {"feedback", "ef"}});
  }
  if (forward)
    for (int bits : {2, 4}) settings.push_back({{"method", "quantize"}, {"bits", bits}, {"feedback", "aqsgd"}});
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
// Steps of an AQ-SGD setting's run (measureAqsgd()): three before every sample has been seen, then seven.
constexpr int kAqsgdSteps = 10;

bool isAqsgd(const CompressionOptions& options) {
  return options.feedback == "aqsgd";
}

// `a` for the fraction `f` of the steps and `b` for the rest: what a message costs over a run on average.
MessageCost mix(const MessageCost& a, const MessageCost& b, double f) {
  MessageCost m = b;
  m.encode_s = f * a.encode_s + (1 - f) * b.encode_s;
  m.decode_s = f * a.decode_s + (1 - f) * b.decode_s;
  m.bytes = f * a.bytes + (1 - f) * b.bytes;
  return m;
}

struct Candidate {
  Setting setting;
  CandidateMeasure measure;
  const plan::Evidence* evidence = nullptr;  // the runs behind its accuracy, or null: its error alone
  double float32_share = 0;                  // PlannedDirection::float32_share
};

json considered(const PlannedDirection& d) {
  json out = json::array();
  for (const auto& c : d.considered)
    out.push_back({{"setting", c.setting},
                   {"bytes", c.measure.cost.bytes},
                   {"encode_s", c.measure.cost.encode_s},
                   {"decode_s", c.measure.cost.decode_s},
                   {"relative_error", c.measure.relative_error},
                   {"float32_share", c.float32_share},
                   {"verdict", c.verdict}});
  return out;
}

}  // namespace

json PlanOutcome::toJson() const {
  json rows = json::array();
  for (const auto& d : directions)
    rows.push_back({{"direction", linkDirectionName(d.direction)},
                    {"setting", d.setting},
                    {"bytes", d.measure.cost.bytes},
                    {"encode_s", d.measure.cost.encode_s},
                    {"decode_s", d.measure.cost.decode_s},
                    {"relative_error", d.measure.relative_error},
                    {"evidence", d.evidence},
                    {"float32_share", d.float32_share},
                    {"considered", considered(d)}});
  return {
      {"bandwidth_mbps", network.bandwidth_mbps},
      {"latency_ms", network.latency_ms},
      {"accuracy_budget", accuracy_budget},
      {"error_budget", error_budget},
      {"tie_tolerance", tie_tolerance},
      {"directions", rows},
      {"step_s", best.step_s},
      {"steps_factor", best.steps_factor},
      {"accuracy_cost", best.accuracy_cost},
      {"error_only_risk", best.risk},
      {"fastest_vs_plan", best.fastest / best.time_factor()},
      {"dense_step_s", dense.step_s},
      {"time_to_target_vs_dense", best.time_factor() / dense.time_factor()},
      {"best_uniform", uniform ? json(uniform_setting) : json(nullptr)},
      {"time_to_target_vs_best_uniform", uniform ? json(best.time_factor() / uniform->time_factor()) : json(nullptr)},
      {"optimal", best.optimal},
      {"replays", best.evaluated},
      {"seconds", seconds}};
}

PlanOutcome planLinks(const PlanRequest& request, const PlanProgress& progress) {
  const Config config = Config::fromJson(request.preset, request.name);
  if (config.pipeline.stages < 2)
    throw ConfigError(request.name + " has one stage, so no link to plan; raise pipeline.stages");
  const Config dense = withoutCompression(config);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Setting> gradientGrid = gridFor(false), activationGrid = gridFor(true);
  const int total = int(gradientGrid.size() + std::count_if(activationGrid.begin(), activationGrid.end(),
                                                            [](const Setting& s) { return isAqsgd(s.options); })) +
                    1;  // the profile, then a run per setting but float32's
  int done = 0;
  auto report = [&](const std::string& what) {
    if (progress && !progress(what, done, total)) throw PlanCancelled();
    ++done;
  };

  report("profiling " + std::to_string(request.steps) + " uncompressed steps");
  const LinkProfile profile = profileLinks(dense, request.steps, request.samples);

  // No store yet is no evidence, not an error: every setting is then weighed by its error alone.
  plan::EvidenceSet evidence;
  if (!request.store.empty() && std::filesystem::exists(request.store)) {
    const RunStore store(request.store, RunStore::accessFor(request.store));
    evidence = plan::gatherEvidence(store, dense.json);
  }

  // Codec times where a run pays them (measureSetting()): a short run per setting, every boundary's activations and
  // gradients at once; on activations the setting is taken without its error feedback (the grid has none there).
  std::map<std::string, std::map<LinkDirection, MessageCost>> inRun;  // by the gradients' setting
  for (const auto& setting : gradientGrid) {
    if (setting.options.method == "none") {
      inRun[setting.name] = meanMessageCosts(profile.step);
      continue;
    }
    report("timing " + setting.name);
    json forward = setting.spec;
    forward.erase("feedback");
    inRun[setting.name] = measureSetting(dense, CompressionOptions::fromJson(forward), setting.options, kSettingSteps);
  }
  // AQ-SGD's figures come from a run of its own, its error included.
  std::map<std::string, std::map<LinkDirection, CandidateMeasure>> aqsgd;
  for (const auto& setting : activationGrid)
    if (isAqsgd(setting.options)) {
      report("measuring " + setting.name);
      aqsgd[setting.name] = measureAqsgd(dense, setting.options, kAqsgdSteps);
    }
  report("searching");

  plan::Problem problem;
  problem.profiled = profile.step;
  problem.network = config.link;
  problem.accuracy_budget = request.accuracy_budget;
  problem.tie_tolerance = request.tie_tolerance;
  problem.directions = plan::directionsOf(profile.step);
  std::vector<std::vector<Candidate>> candidates;
  std::vector<std::vector<PlannedDirection::Considered>> considered;
  for (const auto& direction : problem.directions) {
    const auto& tensors = profile.tensors.at(direction);
    const plan::Traffic traffic = direction.forward ? plan::Traffic::Activations : plan::Traffic::Gradients;
    std::vector<Candidate> kept;
    std::vector<plan::Option> options;
    auto& seen = considered.emplace_back();
    for (const auto& setting : direction.forward ? activationGrid : gradientGrid) {
      const bool aq = isAqsgd(setting.options);
      Candidate c{setting, {}, nullptr};
      if (aq) {
        c.measure = aqsgd.at(setting.name).at(direction);
      } else {
        c.measure = measureCandidate(setting.options, direction, tensors, profile.threads_per_stage);
        c.measure.cost = inRun.at(setting.name).at(direction);  // the same bytes; the times a run has
      }
      // The setting as a run of the whole preset would have it: that traffic compressed on every boundary.
      json asRun = dense.json;
      asRun["compression"][direction.forward ? "forward" : "backward"] = setting.options.toJson();
      const auto name = plan::settingOf(dense.json, Config::fromJson(asRun).json, nullptr);
      c.evidence = name && !name->empty() ? evidence.find(traffic, *name) : nullptr;
      plan::Option option{setting.name, c.measure.cost, 1, 0};
      seen.push_back({setting.name, c.measure, "offered"});
      if (setting.options.method == "none") {
        // dense itself
      } else if (c.evidence) {
        if (!c.evidence->steps_factor) {
          seen.back().verdict = "its runs never reached the target";
          continue;
        }
        option.steps_factor = *c.evidence->steps_factor;
        option.accuracy_cost = std::max(0.0, c.evidence->accuracy_cost);
        if (aq) {
          // Its first epochs send float32 (at least the first, which fills the buffers): of the steps its runs
          // needed, that share costs what dense's messages do.
          const double warm =
              double(std::max<int64_t>(1, config.compression.aqsgd_warmup_epochs) * profile.steps_per_epoch);
          const double needed = option.steps_factor * evidence.dense_steps;
          c.float32_share = seen.back().float32_share = needed > 0 ? std::min(1.0, warm / needed) : 1.0;
          option.cost = mix(inRun.at("none").at(direction), c.measure.cost, c.float32_share);
        }
      } else if (aq) {
        seen.back().verdict = "no run vouches for it";  // its error measured here is a floor (measureAqsgd())
        continue;
      } else if (c.measure.relative_error > request.error_budget) {
        seen.back().verdict = "over the error budget";  // and no run vouches for it
        continue;
      } else {
        option.risk = c.measure.relative_error;  // within the budget, but only its error speaks for it
      }
      options.push_back(option);
      kept.push_back(std::move(c));
    }
    problem.options.push_back(std::move(options));
    candidates.push_back(std::move(kept));
  }

  PlanOutcome out;
  out.best = plan::search(problem);
  out.dense = plan::evaluate(problem, std::vector<size_t>(problem.directions.size(), 0));
  out.uniform = plan::bestUniform(problem);
  if (out.uniform) out.uniform_setting = problem.options[0][out.uniform->choice[0]].setting;
  out.network = config.link;
  out.accuracy_budget = request.accuracy_budget, out.error_budget = request.error_budget;
  out.tie_tolerance = request.tie_tolerance;

  // The planned preset: the given one with a setting per boundary and direction.
  json& planned = out.planned = request.preset;
  if (planned.contains("compression"))
    for (const char* key : {"forward", "backward", "boundaries"}) planned["compression"].erase(key);
  for (size_t d = 0; d < problem.directions.size(); ++d) {
    const auto& direction = problem.directions[d];
    const Candidate& c = candidates[d][out.best.choice[d]];
    planned["compression"]["boundaries"][std::to_string(direction.boundary)]
           [direction.forward ? "forward" : "backward"] = c.setting.spec;
    out.directions.push_back({direction, c.setting.name, c.setting.spec, c.measure,
                              c.setting.options.method == "none" ? json("dense")
                              : c.evidence                       ? json(c.evidence->runs)
                                                                 : json("error only"),
                              c.float32_share, std::move(considered[d])});
  }
  char bandwidth[32];
  std::snprintf(bandwidth, sizeof bandwidth, "%g", config.link.bandwidth_mbps);
  planned["run"]["name"] = config.run.name + ", planned for " + bandwidth + " Mbit/s";
  planned["run"]["tags"] = "planned";
  Config::fromJson(planned, "the planned preset");  // what is handed on must load
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ps
