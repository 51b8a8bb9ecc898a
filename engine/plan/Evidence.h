#pragma once
// The planner's accuracy model: what finished runs in a store say about a compression setting, never a guess.
//
// A run counts as evidence for a setting when it trained what the plan trains: its settings differ from the dense
// configuration (the preset with nothing compressed) only in the seed and in one kind of traffic's compression,
// activations (compression.forward) or activation gradients (compression.backward), the same on every boundary. Runs
// that differ from it in nothing but the seed are the dense reference. Claim-suite runs count like any other.
//
// From them, per setting: its final evaluation against dense's (the means over seeds), as points of accuracy lost (for
// a language model: percent of perplexity gained), and the steps it needed to reach `fraction` of dense's final value
// against the steps dense needed, as the claim suites and the break-even map set their target. Torch-free.
#include "engine/runs/store/RunStore.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ps::plan {

enum class Traffic { Activations, Gradients };  // the forward link directions, or the backward ones
const char* trafficName(Traffic t);             // "activations", "gradients"

struct Evidence {
  Traffic traffic = Traffic::Activations;
  std::string setting;                 // what differs from dense on that traffic: "method=topk, k=0.1"
  std::vector<int64_t> runs;           // the finished runs that used it
  double final_value = 0;              // their mean final evaluation
  double accuracy_cost = 0;            // points lost against dense (negative: better than dense)
  std::optional<double> steps_factor;  // steps to the target against dense's; unset: some run never reached it
};

struct EvidenceSet {
  std::string metric;              // eval/accuracy or eval/perplexity
  std::vector<int64_t> dense;      // the dense reference runs (finished, with evaluations)
  double dense_final = 0;          // their mean final evaluation
  double target = 0;               // `fraction` of it (a perplexity: divided by it)
  double dense_steps = 0;          // the steps the dense runs needed to reach it (their mean); 0 where one never did
  std::vector<Evidence> settings;  // by traffic, then setting
  // The evidence for a setting on a traffic, or null where no finished run used it.
  const Evidence* find(Traffic traffic, const std::string& setting) const;
};

// The setting `config` uses, as a difference from `dense` (both full, validated configurations): "" when they differ
// in nothing but the seed; unset when they differ in anything but one traffic's compression (the other traffic's,
// a boundary of its own, the model, the data, the schedule...). `traffic` receives which traffic it compresses.
std::optional<std::string> settingOf(const nlohmann::json& dense, const nlohmann::json& config, Traffic* traffic);

// Every finished run of the store that counts, gathered per setting. Without a dense reference run there is no
// evidence at all (the set is empty): a setting's cost is only ever measured against dense trained the same way.
EvidenceSet gatherEvidence(const RunStore& store, const nlohmann::json& denseConfig, double fraction = 0.98);

}  // namespace ps::plan
