#include "app/ui/runs/SeedGroups.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace ps::ui {
namespace {

// The configuration a seed group shares: everything but what does not change training.
std::string groupKey(const RunSeries& run) {
  nlohmann::json c = run.config;
  if (!c.is_object()) return "run " + std::to_string(run.info.id);  // unreadable: a group of its own
  if (c.contains("train") && c["train"].is_object()) c["train"].erase("seed");
  c.erase("run");
  return c.dump();
}

// The line's value at x by linear interpolation; x must lie within the line's range.
double valueAt(const std::vector<QPointF>& line, double x) {
  const auto after =
      std::lower_bound(line.begin(), line.end(), x, [](const QPointF& p, double v) { return p.x() < v; });
  if (after == line.end()) return line.back().y();
  if (after->x() == x || after == line.begin()) return after->y();
  const QPointF& a = *(after - 1);
  const QPointF& b = *after;
  return a.y() + (b.y() - a.y()) * (x - a.x()) / (b.x() - a.x());
}

}  // namespace

std::vector<std::vector<const RunSeries*>> seedGroups(const std::vector<const RunSeries*>& runs) {
  std::vector<std::vector<const RunSeries*>> groups;
  std::map<std::string, size_t> at;
  for (const RunSeries* r : runs) {
    const auto [it, fresh] = at.emplace(groupKey(*r), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

SeedBand seedBand(const std::vector<std::vector<QPointF>>& lines) {
  SeedBand band;
  if (lines.empty()) return band;
  double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
  std::vector<double> xs;
  for (const auto& line : lines) {
    if (line.empty()) return band;
    from = std::max(from, line.front().x());
    to = std::min(to, line.back().x());
    for (const QPointF& p : line) xs.push_back(p.x());
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs) {
    if (x < from || x > to) continue;
    double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& line : lines) {
      const double v = valueAt(line, x);
      sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
    }
    band.mean.emplace_back(x, sum / double(lines.size()));
    band.lo.emplace_back(x, lo);
    band.hi.emplace_back(x, hi);
  }
  return band;
}

}  // namespace ps::ui
