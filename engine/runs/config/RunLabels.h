#pragma once
// A run's name and tags come from the preset it was started from, and describe that preset ("uncompressed",
// "baseline"). Once a setting that shapes training differs from the preset's, they no longer describe the run, and a
// TopK run tagged "baseline" misleads everyone who filters by tag. Torch-free.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ps {

// The keys (dot paths) whose values differ between two configs, in key order, leaving out those that do not change
// what training computes: run.*, eval.*, telemetry.*, and where and how it runs (processes, devices, threads).
std::vector<std::string> trainingChanges(const nlohmann::json& preset, const nlohmann::json& config);

// When `config` (a validated full config) differs from `preset` (the same, as loaded) in a setting that shapes
// training, the preset's run.name and run.tags it still carries are replaced: the name says what changed
// ("<preset name>, compression.forward.k=0.01", the first three changes, then "+N more") and the tags become
// "modified". A name or tags the user set are kept. Returns whether it relabelled.
bool relabelModified(const nlohmann::json& preset, nlohmann::json& config);

}  // namespace ps
