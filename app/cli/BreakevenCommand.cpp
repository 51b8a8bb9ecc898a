#include "app/cli/BreakevenCommand.h"

#include "engine/runs/trace/Breakeven.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace ps::cli {
namespace {

using nlohmann::json;

// "1,3,10": each a number; a word that is not one is named.
std::vector<double> bandwidthList(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < item.size() && item[used] == ' ') ++used;
    if (item.empty() || used != item.size())
      throw std::runtime_error("--bandwidths takes numbers of Mbit/s separated by commas (1,10,100); '" + item +
                               "' is not one");
    out.push_back(v);
  }
  if (out.empty()) throw std::runtime_error("--bandwidths names no bandwidth; give some, as 1,10,100");
  return out;
}

std::string cell(const std::optional<double>& seconds) {
  if (!seconds) return "not reached";
  char b[32];
  std::snprintf(b, sizeof b, *seconds < 100 ? "%.2f s" : "%.0f s", *seconds);
  return b;
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

void printBreakeven(const RunStore& store, const RunsOptions& o) {
  BreakevenOptions options;
  if (!o.bandwidths.empty()) options.bandwidths = bandwidthList(o.bandwidths);
  options.network.latency_ms = o.latency_ms;
  if (!o.framing.empty()) options.network.tcp = o.framing == "tcp";
  if (!o.egress.empty()) options.network.shared_egress = o.egress == "stage";
  if (o.target && o.target_fraction) throw std::runtime_error("give --target or --target-fraction, not both");
  options.target = o.target;
  if (o.target_fraction) options.fraction = *o.target_fraction;
  const BreakevenMap map = breakevenMap(store, runIds(o, "runs breakeven"), options);

  if (o.json) {
    auto orNull = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json runs = json::array(), rows = json::array(), pairs = json::array();
    for (const auto& r : map.runs) {
      json seconds = json::array();
      for (const auto& s : r.seconds) seconds.push_back(orNull(s));
      runs.push_back({{"run_id", r.id},
                      {"name", r.name},
                      {"uncompressed", r.dense},
                      {"final", orNull(r.final_value)},
                      {"seconds", seconds},
                      {"why", r.why.empty() ? json(nullptr) : json(r.why)}});
    }
    for (size_t b = 0; b < map.bandwidths.size(); ++b)
      rows.push_back({{"bandwidth_mbps", map.bandwidths[b]},
                      {"winner", map.winner[b] < 0 ? json(nullptr) : json(map.runs[size_t(map.winner[b])].id)}});
    for (const auto& p : map.pairs)
      pairs.push_back({{"run_id", p.method},
                       {"uncompressed_run_id", p.dense},
                       {"crossings_mbps", p.crossings},
                       {"wins_below_mbps", orNull(p.wins_below)},
                       {"wins_everywhere", p.everywhere},
                       {"wins_nowhere", p.nowhere},
                       {"summary", p.summary}});
    std::cout << json{{"metric", map.metric},
                      {"higher_is_better", map.higher_is_better},
                      {"target", map.target},
                      {"target_from", map.target_from},
                      {"latency_ms", orNull(map.network.latency_ms)},
                      {"bandwidths_mbps", map.bandwidths},
                      {"runs", runs},
                      {"winners", rows},
                      {"pairs", pairs}}
                     .dump()
              << "\n";
    return;
  }

  std::cout << "time to " << map.metric << " " << number(map.target) << " (" << map.target_from << "), "
            << (map.network.latency_ms ? number(*map.network.latency_ms) + " ms latency" : "each step's own latency")
            << "\n";
  for (const auto& r : map.runs)
    std::cout << "  run " << r.id << ": " << r.name << (r.dense ? " (uncompressed)" : "")
              << (r.final_value ? ", final " + number(*r.final_value) : ", no evaluation")
              << (r.seconds.empty() || r.seconds.front() ? "" : ", " + r.why) << "\n";
  std::printf("%12s", "Mbit/s");
  for (const auto& r : map.runs) std::printf("  %12s", ("run " + std::to_string(r.id)).c_str());
  std::printf("  %s\n", "fastest");
  for (size_t b = 0; b < map.bandwidths.size(); ++b) {
    std::printf("%12s", number(map.bandwidths[b]).c_str());
    for (const auto& r : map.runs) std::printf("  %12s", cell(r.seconds[b]).c_str());
    std::printf("  %s\n", map.winner[b] < 0 ? "none reached it"
                                            : ("run " + std::to_string(map.runs[size_t(map.winner[b])].id)).c_str());
  }
  std::fflush(stdout);
  for (const auto& p : map.pairs) std::cout << p.summary << "\n";
  if (map.pairs.empty())
    std::cout << "no pair of a compressed and an uncompressed run to find a break-even bandwidth for\n";
}

}  // namespace ps::cli
