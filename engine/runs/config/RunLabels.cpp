#include "engine/runs/config/RunLabels.h"

#include "engine/runs/config/Config.h"

#include <algorithm>
#include <iterator>

namespace ps {
namespace {

using nlohmann::json;

void collect(const json& a, const json& b, const std::string& path, std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      collect(it.value(), b.contains(it.key()) ? b[it.key()] : json(), path.empty() ? it.key() : path + "." + it.key(),
              out);
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) collect(json(), it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  if (a != b) out.push_back(path);
}

std::string text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::vector<std::string> trainingChanges(const json& preset, const json& config) {
  std::vector<std::string> all, changes;
  collect(preset, config, "", all);
  // How and where it runs, not what it computes: processes or threads, devices, cores, timeouts, a real wait.
  static const char* const execution[] = {
      "parallel.mode",   "parallel.backend",      "parallel.transport",     "parallel.timeout_s",    "train.threads",
      "pipeline.device", "pipeline.device_reads", "pipeline.stage_streams", "pipeline.stream_check", "data.root",
      "link.mode",       "pipeline.cuda_graphs"};
  for (const auto& key : all) {
    if (key.rfind("run.", 0) == 0 || key.rfind("eval.", 0) == 0 || key.rfind("telemetry.", 0) == 0) continue;
    if (std::find(std::begin(execution), std::end(execution), key) != std::end(execution)) continue;
    changes.push_back(key);
  }
  return changes;
}

bool relabelModified(const json& preset, json& config) {
  const json name = configValueOrNull(preset, "run.name"), tags = configValueOrNull(preset, "run.tags");
  const bool presetsName = configValueOrNull(config, "run.name") == name, presetsTags = configValueOrNull(config, "run.tags") == tags;
  if (!presetsName && !presetsTags) return false;  // the user's own
  const auto changes = trainingChanges(preset, config);
  if (changes.empty()) return false;
  if (presetsTags) config["run"]["tags"] = "modified";
  if (!presetsName) return true;
  std::string label = name.is_string() && !name.get<std::string>().empty() ? name.get<std::string>() : "run";
  for (size_t i = 0; i < changes.size() && i < 3; ++i)
    label += ", " + changes[i] + "=" + text(configValueOrNull(config, changes[i]));
  if (changes.size() > 3) label += ", +" + std::to_string(changes.size() - 3) + " more";
  config["run"]["name"] = label;
  return true;
}

}  // namespace ps
