#include "engine/suites/SuitePlan.h"

#include "engine/runs/config/Config.h"

namespace ps {

using nlohmann::json;

std::string configIdentity(const json& config) {
  json j = config;
  if (j.is_object()) j.erase("run");
  return j.dump();
}

std::string suiteTags(const Suite& suite, const std::string& variant, uint64_t seed, bool quick) {
  return "suite:" + suite.name + ",variant:" + variant + ",seed:" + std::to_string(seed) + (quick ? ",quick" : "");
}

std::vector<PlannedRun> planSuite(const Suite& suite, int seeds, bool quick) {
  const json base = readJsonFile(resolvePreset(suite.base));
  std::vector<PlannedRun> out;
  for (uint64_t seed : suite.seedList(seeds))
    for (const auto& v : suite.variants) {
      const std::string source = suite.path + ", variant " + v.name;
      json j = base;
      try {
        for (const auto& s : suite.sets) applyOverride(j, s);
        if (quick)
          for (const auto& s : suite.quick) applyOverride(j, s);
        for (const auto& s : v.sets) applyOverride(j, s);
      } catch (const ConfigError& e) {
        throw ConfigError(source + ": " + e.what());
      }
      j["train"]["seed"] = seed;
      j["run"]["name"] =
          suite.title + ": " + v.label + " (seed " + std::to_string(seed) + (quick ? ", quick" : "") + ")";
      j["run"]["tags"] = suiteTags(suite, v.name, seed, quick);
      j["run"]["notes"] = "claim suite " + suite.name + " (" + suite.citation + ")";
      PlannedRun r;
      r.variant = v.name;
      r.seed = seed;
      r.config = Config::fromJson(j, source).json;
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
  return Config::fromJson(j, source).json;
}

}  // namespace ps
