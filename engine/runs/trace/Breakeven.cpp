#include "engine/runs/trace/Breakeven.h"

#include "engine/core/Metrics.h"
#include "engine/core/StepTrace.h"
#include "engine/runs/store/Reach.h"
#include "engine/runs/trace/Retime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ps {
namespace {

using nlohmann::json;

// A run read once: its evaluation curve and its decoded steps, re-timed at any bandwidth without touching the store.
struct Loaded {
  BreakevenRun out;
  std::string task;
  std::vector<MetricPoint> curve;
  std::vector<int64_t> steps;
  std::vector<StepTrace> traces;

  // When the curve reaches `target` at `bandwidth`, in emulated seconds; unset when it never does.
  std::optional<double> secondsTo(double target, bool higher, double bandwidth, RetimeNetwork n) const {
    const auto r = reach(curve, target, higher, [](const MetricPoint& p) { return p.value; });
    if (!r) return std::nullopt;
    n.bandwidth_mbps = bandwidth;
    // The cumulative time at each step, as far as the evaluation that reaches the target needs.
    std::vector<double> cumulative;
    double sum = 0;
    for (size_t i = 0; i < traces.size() && steps[i] <= r->at->step; ++i) {
      try {
        sum += replay(traces[i], n.applyTo(traces[i].model));
      } catch (const TraceError& e) {
        throw TraceError("run " + std::to_string(out.id) + ", step " + std::to_string(steps[i]) + ": " + e.what());
      }
      cumulative.push_back(sum);
    }
    const auto at = [&](const MetricPoint& p) {  // the emulated seconds after the last step at or before p's
      const auto it = std::upper_bound(steps.begin(), steps.begin() + std::ptrdiff_t(cumulative.size()), p.step);
      return it == steps.begin() ? 0.0 : cumulative[size_t(it - steps.begin()) - 1];
    };
    return r->read(at);
  }
};

Loaded load(const RunStore& store, int64_t id) {
  Loaded l;
  const auto info = store.run(id);
  if (!info) throw StoreError("no run " + std::to_string(id) + " in " + store.path());
  l.out.id = id;
  l.out.name = info->name;
  l.out.dense = compressesNothing(info->config_json);
  try {
    const json config = json::parse(info->config_json);
    l.task = config.value("task", std::string());
  } catch (const json::exception&) {  // settings that cannot be read: compared as a task of its own
    l.task = "?";
  }
  const std::string key = l.task == "brown_lm" ? metric::kEvalPerplexity : metric::kEvalAccuracy;
  for (auto& m : store.metrics(id, key))
    if (m.key == key && std::isfinite(m.value)) l.curve.push_back(std::move(m));
  if (!l.curve.empty()) l.out.final_value = l.curve.back().value;
  const auto rows = store.traces(id);
  if (rows.empty())
    throw TraceError("run " + std::to_string(id) + " (" + info->name +
                     ") has no step traces, so it cannot be re-timed for other bandwidths: it was saved by a "
                     "PipeSqueeze that did not keep them, or stopped before its first step. Leave it out or train it "
                     "again");
  for (const auto& row : rows) {
    l.steps.push_back(row.step);
    try {
      l.traces.push_back(decodeTrace(row.trace));
    } catch (const TraceError& e) {
      throw TraceError("run " + std::to_string(id) + ", step " + std::to_string(row.step) + ": " + e.what());
    }
  }
  return l;
}

std::string figure(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 1e4 && v < 1e9 ? "%.0f" : "%.4g", v);  // 10000, not 1e+04
  return b;
}

// Which of the two is faster at `bandwidth`: < 0 the method, > 0 dense, 0 a tie or neither reaches the target.
double lead(const Loaded& method, const Loaded& dense, double target, bool higher, double bandwidth,
            const RetimeNetwork& network) {
  const auto m = method.secondsTo(target, higher, bandwidth, network);
  const auto d = dense.secondsTo(target, higher, bandwidth, network);
  if (m && d) return *m - *d;
  if (m) return -1;
  if (d) return 1;
  return 0;
}

}  // namespace

std::string describePair(const BreakevenPair& p, const std::vector<double>& bandwidths,
                         const std::function<std::string(int64_t)>& nameOf) {
  const std::string a = nameOf(p.method), b = nameOf(p.dense);
  if (p.everywhere)
    return a + " beats " + b + " at every bandwidth mapped (up to " + figure(bandwidths.back()) + " Mbit/s)";
  if (p.nowhere) return a + " beats " + b + " at no bandwidth mapped (from " + figure(bandwidths.front()) + " Mbit/s)";
  if (p.wins_below && p.crossings.size() == 1) return a + " beats " + b + " below " + figure(*p.wins_below) + " Mbit/s";
  std::string out = a + " and " + b + " trade places at";
  for (double c : p.crossings) out += " " + figure(c);
  return out + " Mbit/s";
}

bool compressesNothing(const std::string& configJson) {
  json config;
  try {
    config = json::parse(configJson);
  } catch (const json::exception&) {
    return false;
  }
  const auto none = [](const json& direction) {
    return !direction.is_object() || !direction.contains("method") || direction["method"] == "none";
  };
  if (!config.contains("compression") || !config["compression"].is_object()) return true;
  const json& c = config["compression"];
  for (const char* d : {"forward", "backward", "gradients"})
    if (c.contains(d) && !none(c[d])) return false;
  if (c.contains("boundaries") && c["boundaries"].is_object())
    for (const auto& [boundary, directions] : c["boundaries"].items())
      for (const char* d : {"forward", "backward"})
        if (directions.is_object() && directions.contains(d) && !none(directions[d])) return false;
  return true;
}

BreakevenMap breakevenMap(const RunStore& store, const std::vector<int64_t>& runIds, const BreakevenOptions& o) {
  if (runIds.empty()) throw TraceError("name at least one run to map");
  if (o.bandwidths.empty()) throw TraceError("name at least one bandwidth (--bandwidths 10,100,1000)");
  BreakevenMap map;
  map.network = o.network;
  map.network.bandwidth_mbps.reset();
  map.network.check();
  for (double b : o.bandwidths) {
    RetimeNetwork n;
    n.bandwidth_mbps = b;
    n.check();
    map.bandwidths.push_back(b);
  }
  std::sort(map.bandwidths.begin(), map.bandwidths.end());
  map.bandwidths.erase(std::unique(map.bandwidths.begin(), map.bandwidths.end()), map.bandwidths.end());

  std::vector<Loaded> runs;
  for (int64_t id : runIds) {
    if (std::any_of(runs.begin(), runs.end(), [&](const Loaded& l) { return l.out.id == id; })) continue;
    runs.push_back(load(store, id));
    if (runs.back().task != runs.front().task)
      throw TraceError("run " + std::to_string(id) + " trained " + runs.back().task + " and run " +
                       std::to_string(runs.front().out.id) + " " + runs.front().task +
                       ": their evaluations do not share a target; map runs of one task");
  }
  map.higher_is_better = runs.front().task != "brown_lm";
  map.metric = map.higher_is_better ? metric::kEvalAccuracy : metric::kEvalPerplexity;

  // The target, as the suites set it: a share of the uncompressed run's final value.
  if (o.target) {
    if (!(std::isfinite(*o.target) && *o.target > 0) || (map.higher_is_better && *o.target > 1))
      throw TraceError("the target " + figure(*o.target) + " is not " +
                       (map.higher_is_better ? "an accuracy: give a fraction, 0.85 for 85%"
                                             : "a perplexity: give a positive number"));
    map.target = *o.target;
    map.target_from = "given";
  } else {
    if (!(std::isfinite(o.fraction) && o.fraction > 0 && o.fraction <= 1))
      throw TraceError("the target fraction must be in (0, 1], not " + figure(o.fraction));
    const Loaded* of = nullptr;
    for (const auto& r : runs)
      if (r.out.dense && r.out.final_value) {
        of = &r;
        break;
      }
    std::string whose = "uncompressed run";
    if (!of) {
      whose = "best run";
      for (const auto& r : runs)
        if (r.out.final_value && (!of || (map.higher_is_better ? *r.out.final_value > *of->out.final_value
                                                               : *r.out.final_value < *of->out.final_value)))
          of = &r;
    }
    if (!of) throw TraceError("none of the runs has an evaluation to set the target from; give one with --target");
    map.target = map.higher_is_better ? o.fraction * *of->out.final_value : *of->out.final_value / o.fraction;
    map.target_from = figure(100 * o.fraction) + "% of the " + whose + " " + std::to_string(of->out.id) + "'s final " +
                      map.metric + " " + figure(*of->out.final_value);
  }

  for (auto& r : runs) {
    for (double b : map.bandwidths)
      r.out.seconds.push_back(r.secondsTo(map.target, map.higher_is_better, b, map.network));
    if (!r.out.seconds.empty() && !r.out.seconds.front()) r.out.why = r.curve.empty() ? "no evaluation" : "not reached";
  }
  for (size_t b = 0; b < map.bandwidths.size(); ++b) {
    int best = -1;
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs[i].out.seconds[b] && (best < 0 || *runs[i].out.seconds[b] < *runs[size_t(best)].out.seconds[b]))
        best = int(i);
    map.winner.push_back(best);
  }

  // Each compressed run against each uncompressed one: where the faster changes, bisected on a log scale.
  for (const auto& m : runs) {
    if (m.out.dense) continue;
    for (const auto& d : runs) {
      if (!d.out.dense) continue;
      BreakevenPair p;
      p.method = m.out.id, p.dense = d.out.id;
      std::vector<double> leads;
      for (double b : map.bandwidths) leads.push_back(lead(m, d, map.target, map.higher_is_better, b, map.network));
      bool any = false, all = true;
      for (double l : leads) any = any || l < 0, all = all && l < 0;
      p.everywhere = all, p.nowhere = !any;
      for (size_t i = 0; i + 1 < leads.size(); ++i) {
        if ((leads[i] < 0) == (leads[i + 1] < 0)) continue;
        double lo = std::log(map.bandwidths[i]), hi = std::log(map.bandwidths[i + 1]);
        const bool lowWins = leads[i] < 0;
        while (hi - lo > 1e-3) {  // 0.1% of the bandwidth
          const double mid = 0.5 * (lo + hi);
          const bool wins = lead(m, d, map.target, map.higher_is_better, std::exp(mid), map.network) < 0;
          (wins == lowWins ? lo : hi) = mid;
        }
        p.crossings.push_back(std::exp(0.5 * (lo + hi)));
        if (lowWins) p.wins_below = p.crossings.back();
      }
      p.summary = describePair(p, map.bandwidths, [](int64_t id) { return "run " + std::to_string(id); });
      map.pairs.push_back(std::move(p));
    }
  }
  for (auto& r : runs) map.runs.push_back(std::move(r.out));
  return map;
}

}  // namespace ps
