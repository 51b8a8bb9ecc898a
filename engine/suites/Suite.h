#pragma once
// A claim suite: one claim of a paper, the runs that test it and the rules that judge them, read from a JSON file
// (presets/suites/*.json; every key is described in presets/suites/README.md). Nothing here trains: SuitePlan turns
// a suite into run configurations, SuiteRunner runs what the store lacks, SuiteResults and Verdict judge.
#include "engine/core/Metrics.h"
#include "engine/core/RunSummary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ps {

struct SuiteVariant {
  std::string name;               // short id, used in rules, tags and file names
  std::string label;              // what the report calls it
  std::vector<std::string> sets;  // "key=value" overrides, as --set takes them
};

// One side of a rule: a variant's metric, or the best of several variants' (per seed).
struct SuiteOperand {
  std::string variant;            // one variant ...
  std::vector<std::string> best;  // ... or the best of these (lowest or highest, as the metric prefers)
  std::string metric;             // empty: the rule's metric
  std::string describe() const;
};

// Holds when lhs op (scale * rhs + offset), judged across seeds (Verdict.h).
struct SuiteRule {
  std::string text;   // the claim as this rule tests it, e.g. "TopK 10%: backward-only beats forward-only by 1 point"
  std::string paper;  // what the paper reports for it
  std::string metric;
  SuiteOperand lhs, rhs;
  std::string op = ">=";  // >= or <=
  double scale = 1, offset = 0;
};

// The accuracy (or perplexity) the time- and bytes-to-target metrics wait for: `fraction` of the `of` variant's final
// value of `metric` in the same seed (for a lower-is-better metric, that value divided by `fraction`).
struct SuiteTarget {
  std::string metric = summary_key::kEvalAccuracy;
  double fraction = 0.98;
  std::string of;  // a variant; empty: the first variant
};

// A run the suite needs before its own (a pretrained checkpoint): run once when `creates` does not exist.
struct SuitePrepare {
  std::string preset;
  std::vector<std::string> sets, quick;
  std::string creates, quick_creates;  // what it creates; with --quick (its quick overrides write elsewhere)
  const std::string& output(bool quick) const { return quick && !quick_creates.empty() ? quick_creates : creates; }
};

// The scale a suite runs at: as written (the paper's scale, sized for a CPU), --quick's first look, --gpu's models at
// the size GPUs are for, or both (the GPU models for --quick's few steps).
struct SuiteScale {
  bool quick = false;
  bool gpu = false;
  // The scale as words, GPU first: spelled(",gpu", ",quick") is ",gpu,quick" for both, "" for neither.
  std::string spelled(const char* asGpu, const char* asQuick) const {
    return std::string(gpu ? asGpu : "") + (quick ? asQuick : "");
  }
  std::string tags() const { return spelled(",gpu", ",quick"); }
  std::string flags() const { return spelled(" --gpu", " --quick"); }
  // Where a report of this scale goes beside the full one's: NAME, NAME-quick, NAME-gpu, NAME-gpu-quick.
  std::string suffix() const { return spelled("-gpu", "-quick"); }
};

// How big a suite may be: a file of a few megabytes could otherwise ask for millions of runs (and the checks and plans
// over them would take minutes and gigabytes before the first run). Far beyond any claim's grid.
inline constexpr size_t kMaxSuiteSeeds = 1000;
inline constexpr size_t kMaxSuiteVariants = 1000;
inline constexpr size_t kMaxSuiteRules = 1000;
inline constexpr size_t kMaxSuiteRuns = 20000;  // variants x seeds, as planned

struct Suite {
  std::string name;  // the file's stem
  std::string path;
  std::string title;               // short, for lists
  std::string claim;               // the claim as the paper states it
  std::string citation;            // authors, title, venue, year
  std::string scale;               // what a full run measures ("Fashion-MNIST, residual CNN, 4 stages, 3 epochs")
  std::string notes;               // anything a reader must know to interpret the verdicts
  // Whether its runs are meant to be timed (one at a time on a quiet machine): its report then maps where compression
  // pays over bandwidths (engine/runs/trace/Breakeven.h). Suites judged on accuracy alone may run beside other work,
  // and a map of their inflated times would mislead.
  bool timed = false;
  std::string base;                // preset name or path
  std::vector<std::string> sets;   // for every variant
  std::vector<std::string> quick;  // added by --quick: a small version for a first look and for CI
  // Added by --gpu (before --quick's): the claim on models at the size GPUs are for (the GPU-scale presets' models and
  // batches). Empty: the suite has no GPU scale, and --gpu is refused.
  std::vector<std::string> gpu;
  std::vector<uint64_t> seeds = {1};
  std::vector<SuiteVariant> variants;
  std::vector<SuiteRule> rules;
  SuiteTarget target;
  std::string curve = metric::kEvalAccuracy;  // the stored metric charted over steps
  std::vector<SuitePrepare> prepare;

  // Reads and validates a suite file; a bad suite raises ConfigError naming the file and the field.
  static Suite load(const std::string& path);
  static Suite fromJson(const nlohmann::json& j, const std::string& name, const std::string& source);
  const SuiteVariant& variant(const std::string& name) const;
  // The first `count` seeds of the suite, continued 1 past the largest where it lists fewer.
  std::vector<uint64_t> seedList(int count) const;
  const std::string& targetOf() const { return target.of.empty() ? variants.front().name : target.of; }
};

// Every suite file in the suites/ folders of the preset search path (PresetSearch.h), folder by folder and each
// sorted by name; a name found earlier hides the same name later.
std::vector<std::string> suiteFiles();
// A suite by path, or by name from those folders; ConfigError naming what was tried.
std::string resolveSuite(const std::string& nameOrPath);

}  // namespace ps
