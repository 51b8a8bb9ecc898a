#pragma once
// A suite as run configurations: the base preset, the suite's overrides, --gpu's, --quick's, the variant's and the
// seed, in that order. Runs are ordered seed by seed, so a grid stopped half way still compares every variant.
#include "engine/suites/Suite.h"

#include <nlohmann/json.hpp>

namespace ps {

struct PlannedRun {
  std::string variant;
  uint64_t seed = 0;
  nlohmann::json config;  // complete and validated (Config::fromJson(config).json)
  std::string identity;   // what makes two runs the same run: the config without its "run" section and its defaults
};

// Throws ConfigError naming the suite file and the variant when a configuration is invalid, and the suite when it has
// no settings for the scale asked (--gpu without a gpu list).
std::vector<PlannedRun> planSuite(const Suite& suite, int seeds, const SuiteScale& scale);
// A prepare step's configuration (quick adds its quick overrides).
nlohmann::json planPrepare(const Suite& suite, const SuitePrepare& step, bool quick);
// The identity of a stored or planned configuration: every setting except the run's name, tags and notes, and except
// those at their default, so runs stored before a key was added are still found.
std::string configIdentity(const nlohmann::json& config);
// The tags of a suite's run: suite:NAME, variant:NAME, seed:N, and "gpu" and "quick" for --gpu and --quick runs.
std::string suiteTags(const Suite& suite, const std::string& variant, uint64_t seed, const SuiteScale& scale);

}  // namespace ps
