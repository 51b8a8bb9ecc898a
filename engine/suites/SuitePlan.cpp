#include "engine/suites/SuitePlan.h"

#include "engine/runs/config/Config.h"
#include "engine/runs/config/ConfigSchema.h"

namespace ps {

using nlohmann::json;

namespace {

// Drops every leaf that holds its key's default, and the objects left empty. A key added to the schema later (a new
// codec's option, say) is absent from older stored configurations and at its default in new ones: both read the same.
void dropDefaults(json& node, const std::string& prefix) {
  for (auto it = node.begin(); it != node.end();) {
    const std::string dotted = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      dropDefaults(*it, dotted);
      it = it->empty() ? node.erase(it) : std::next(it);
      continue;
    }
    const KeySpec* spec = ConfigSchema::instance().find(dotted);
    it = spec && !spec->fallback.is_null() && *it == spec->fallback ? node.erase(it) : std::next(it);
  }
}

}  // namespace

std::string configIdentity(const json& config) {
  json j = config;
  if (!j.is_object()) return j.dump();
  j.erase("run");
  dropDefaults(j, "");
  return j.dump();
}

std::string suiteTags(const Suite& suite, const std::string& variant, uint64_t seed, const SuiteScale& scale) {
  return "suite:" + suite.name + ",variant:" + variant + ",seed:" + std::to_string(seed) + scale.tags();
}

std::vector<PlannedRun> planSuite(const Suite& suite, int seeds, const SuiteScale& scale) {
  if (scale.gpu && suite.gpu.empty())
    throw ConfigError("suite " + suite.name + (suite.path.empty() ? "" : " (" + suite.path + ")") +
                      " has no GPU scale (no \"gpu\" list of settings); run it without --gpu, or add one naming the "
                      "GPU-scale model and batch");
  if (seeds < 1 || size_t(seeds) > kMaxSuiteSeeds)
    throw ConfigError(suite.path + ": " + std::to_string(seeds) + " seeds asked for; a suite runs 1 to " +
                      std::to_string(kMaxSuiteSeeds) + " seeds");
  if (suite.variants.size() * size_t(seeds) > kMaxSuiteRuns)
    throw ConfigError(suite.path + ": " + std::to_string(suite.variants.size()) + " variants x " +
                      std::to_string(seeds) + " seeds is " + std::to_string(suite.variants.size() * size_t(seeds)) +
                      " runs; a suite plans at most " + std::to_string(kMaxSuiteRuns));
  const json base = readJsonFile(resolvePreset(suite.base));
  std::vector<PlannedRun> out;
  for (uint64_t seed : suite.seedList(seeds))
    for (const auto& v : suite.variants) {
      const std::string source = suite.path + ", variant " + v.name;
      json j = base;
      try {
        for (const auto& s : suite.sets) applyOverride(j, s);
        if (scale.gpu)
          for (const auto& s : suite.gpu) applyOverride(j, s);
        if (scale.quick)
          for (const auto& s : suite.quick) applyOverride(j, s);
        for (const auto& s : v.sets) applyOverride(j, s);
      } catch (const ConfigError& e) {
        throw ConfigError(source + ": " + e.what());
      }
      j["train"]["seed"] = seed;
      j["run"]["name"] =
          suite.title + ": " + v.label + " (seed " + std::to_string(seed) + scale.spelled(", gpu", ", quick") + ")";
      j["run"]["tags"] = suiteTags(suite, v.name, seed, scale);
      j["run"]["notes"] = "claim suite " + suite.name + " (" + suite.citation + ")";
      PlannedRun r;
      r.variant = v.name;
      r.seed = seed;
      r.config = Config::fromJson(j, source).json;
      checkPresetPaths(j, source);  // the suite's sets are as untrusted as its base preset
      r.identity = configIdentity(r.config);
      out.push_back(std::move(r));
    }
  return out;
}

json planPrepare(const Suite& suite, const SuitePrepare& step, bool quick) {
  json j = readJsonFile(resolvePreset(step.preset));
  const std::string source = suite.path + ", prepare " + step.preset;
  try {
    for (const auto& s : step.sets) applyOverride(j, s);
    if (quick)
      for (const auto& s : step.quick) applyOverride(j, s);
  } catch (const ConfigError& e) {
    throw ConfigError(source + ": " + e.what());
  }
  j["run"]["tags"] = "suite:" + suite.name + ",prepare" + std::string(quick ? ",quick" : "");
  Config c = Config::fromJson(j, source);
  checkPresetPaths(j, source);
  return c.json;
}

}  // namespace ps
