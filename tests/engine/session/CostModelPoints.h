#pragma once
// The planner's cost model against trained runs: six settings of its grid (quantization at 2, 4 and 8 bits; TopK at
// 1%, 10% and 30% with error feedback on the gradients, as the planner offers it) on 2 and 4 stages, at 10 and 100
// Mbit/s. Each setting's step is predicted from the dense profile and the setting's message costs (measureSetting())
// and compared with other runs of the setting replayed at the same link. The model is 512 wide, so that its 16 KiB
// messages, not its microseconds of compute, make most of a step. Each side is the median of `runs` runs, each run's
// step the median of its steps after the first; the runs alternate dense and compressed (a dense profile beside each
// setting's runs, swapping places every other run), so that a machine whose speed drifts bears on both sides alike.
// The emulated clock never waits, so a run's step at 10 Mbit/s is its trace replayed at 10. Shared by the test (which
// holds every point to a loose bound and the median to a tight one, as CI machines are busy) and bench_cost_model
// (which prints every point, on a quiet machine).
#include "engine/session/PlanProfile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ps::cost_model {

struct Point {
  int stages = 0;
  double bandwidth_mbps = 0;
  std::string setting;
  double predicted_s = 0, measured_s = 0;  // medians over the runs
};

// The smoke preset with `changes` merged into its JSON (what a Config is built from).
inline Config smokeWith(const nlohmann::json& changes) {
  auto j = readJsonFile(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json");
  j.merge_patch(changes);
  return Config::fromJson(j);
}

inline double lowerMedian(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(v.size() - 1) / 2];
}

inline CompressionOptions method(const std::string& name, nlohmann::json options) {
  options["method"] = name;
  return CompressionOptions::fromJson(options);
}

// Every point, 2 stages first. `steps`: steps a run; `runs`: runs a side.
inline std::vector<Point> points(int runs, int steps) {
  struct Setting {
    std::string name;
    CompressionOptions forward, backward;
  };
  std::vector<Setting> settings;
  for (int bits : {2, 4, 8})
    settings.push_back({"quantize bits=" + std::to_string(bits), method("quantize", {{"bits", bits}}),
                        method("quantize", {{"bits", bits}})});
  for (double k : {0.01, 0.1, 0.3})
    settings.push_back({"topk k=" + nlohmann::json(k).dump() + " (backward feedback=ef)", method("topk", {{"k", k}}),
                        method("topk", {{"k", k}, {"feedback", "ef"}})});
  const std::vector<double> bandwidths{10.0, 100.0};
  std::vector<Point> out;
  for (int stages : {2, 4}) {
    const nlohmann::json shape = {{"model", {{"width", 512}, {"depth", 4}}}, {"pipeline", {{"stages", stages}}}};
    const Config dense = smokeWith(shape);
    // [setting][bandwidth][run]
    std::vector<std::vector<std::vector<double>>> predicted(settings.size(), std::vector<std::vector<double>>(2));
    auto measured = predicted;
    const auto compressed = [&](const Setting& setting) {
      nlohmann::json changes = shape;
      changes["compression"] = {{"forward", setting.forward.toJson()}, {"backward", setting.backward.toJson()}};
      return smokeWith(changes);
    };
    // A process's first runs of a shape are not its later ones (its allocator, caches and thread pool settle): one
    // of each, left out.
    (void)profileLinks(dense, steps, 1);
    (void)profileLinks(compressed(settings.front()), steps, 1);
    for (int run = 0; run < runs; ++run)
      for (size_t s = 0; s < settings.size(); ++s) {
        const bool denseFirst = run % 2 == 0;
        std::optional<LinkProfile> p;
        std::map<LinkDirection, MessageCost> costs;
        if (denseFirst)
          p = profileLinks(dense, steps, 4);
        else
          costs = measureSetting(dense, settings[s].forward, settings[s].backward, steps);
        const StepTrace trained = profileLinks(compressed(settings[s]), steps, 1).step;
        if (denseFirst)
          costs = measureSetting(dense, settings[s].forward, settings[s].backward, steps);
        else
          p = profileLinks(dense, steps, 4);
        const StepTrace planned = withMessageCosts(p->step, costs);
        for (size_t b = 0; b < bandwidths.size(); ++b) {
          LinkModel link = dense.link;
          link.bandwidth_mbps = bandwidths[b];
          predicted[s][b].push_back(replay(planned, link));
          measured[s][b].push_back(replay(trained, link));
        }
      }
    for (size_t s = 0; s < settings.size(); ++s)
      for (size_t b = 0; b < bandwidths.size(); ++b)
        out.push_back(
            {stages, bandwidths[b], settings[s].name, lowerMedian(predicted[s][b]), lowerMedian(measured[s][b])});
  }
  return out;
}

}  // namespace ps::cost_model
