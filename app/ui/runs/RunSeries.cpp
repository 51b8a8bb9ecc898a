#include "app/ui/runs/RunSeries.h"
#include "engine/core/Metrics.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/ConfigSchema.h"
#include "engine/telemetry/Charts.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace ps::ui {

QString settingText(const QString& key, const nlohmann::json& v) {
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_number()) {
    const double d = v.get<double>();
    if ((key == QLatin1String("k") || key.endsWith(QLatin1String(".k"))) && d > 0 && d < 1)
      return QString::number(d * 100, 'g', 3) + QStringLiteral(" %");
    if (d == 0) {
      const KeySpec* spec = ConfigSchema::instance().find(key.toStdString());
      if (spec && spec->help.find("0: no limit") != std::string::npos) return QStringLiteral("no limit");
    }
    if (v.is_number_float()) return QString::number(d, 'g', 6);
  }
  return QString::fromStdString(v.dump());
}

QString xAxisLabel(XAxis axis) {
  switch (axis) {
    case XAxis::Step:
      return QStringLiteral("Step");
    case XAxis::WallTime:
      return QStringLiteral("Wall time (s)");
    case XAxis::EmulatedTime:
      return QStringLiteral("Emulated time (s)");
    case XAxis::Bytes:
      return QStringLiteral("Wire bytes sent");
  }
  return QString();
}

// Marker labels must fit beside a chart's vertical line: "compression.forward.k" reads "fwd k",
// "compression.boundaries.1.backward.bits" reads "link1 bwd bits", "train.lr" reads "lr".
QString compactKey(QString key) {
  key.remove(QRegularExpression(QStringLiteral("^(compression|train)\\.")));
  key.replace(QRegularExpression(QStringLiteral("^boundaries\\.(\\d+)\\.")), QStringLiteral("link\\1 "));
  key.replace(QStringLiteral("forward"), QStringLiteral("fwd")).replace(QStringLiteral("backward"), QStringLiteral("bwd"));
  return key.replace(QLatin1Char('.'), QLatin1Char(' '));
}

QString settingLabel(const std::string& kind, const std::string& detailJson) {
  const auto detail = parseJsonOrDiscarded(detailJson);
  const bool object = !detail.is_discarded() && detail.is_object();
  if (eventKindOf(kind) == EventKind::Setting && object && detail.contains("key")) {
    const QString full = settingText(QString(), detail["key"]);
    return detail.contains("to") ? compactKey(full) + QStringLiteral(" = ") + settingText(full, detail["to"])
                                 : compactKey(full);
  }
  if (eventKindOf(kind) == EventKind::Reset && object && detail.contains("boundary")) {
    QString label = QStringLiteral("reset link%1").arg(settingText(QString(), detail["boundary"]));
    if (detail.contains("direction")) label += QLatin1Char(' ') + settingText(QString(), detail["direction"]);
    return label;
  }
  return QString::fromStdString(kind);
}

std::vector<SettingChange> RunSeries::settingChanges() const {
  std::vector<SettingChange> out;
  for (const EventRow& e : events) {
    if (eventKindOf(e.kind) != EventKind::Setting) continue;
    const auto detail = parseJsonOrDiscarded(e.detail_json);
    if (detail.is_discarded() || !detail.is_object() || !detail.contains("key") || !detail["key"].is_string() ||
        !detail.contains("to"))
      continue;
    out.push_back({e.step, detail["key"].get<std::string>(), detail["to"]});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SettingChange& a, const SettingChange& b) { return a.step < b.step; });
  return out;
}

void RunSeries::append(const MetricPoint& point) {
  auto& list = metrics[point.key];
  const SeriesPoint p{point.step, point.value, point.wall_s, point.emulated_s};
  if (list.empty() || list.back().step <= point.step) {
    list.push_back(p);
  } else {  // tolerate a late point: keep the key in step order
    auto at = std::upper_bound(list.begin(), list.end(), point.step,
                               [](int64_t s, const SeriesPoint& q) { return s < q.step; });
    list.insert(at, p);
  }
  if (point.key != metric::kWireBytes) return;
  const double v = std::isfinite(point.value) ? point.value : 0.0;
  if (cumulativeBytes_.empty() || cumulativeBytes_.back().first < point.step) {
    const double before = cumulativeBytes_.empty() ? 0.0 : cumulativeBytes_.back().second;
    cumulativeBytes_.emplace_back(point.step, before + v);
  } else if (cumulativeBytes_.back().first == point.step) {
    cumulativeBytes_.back().second += v;  // a second bytes/wire row at the same step adds to it
  } else {                                // out of order: rebuild from the (sorted) points
    cumulativeBytes_.clear();
    double total = 0;
    for (const auto& q : list) {
      total += std::isfinite(q.value) ? q.value : 0.0;
      if (!cumulativeBytes_.empty() && cumulativeBytes_.back().first == q.step)
        cumulativeBytes_.back().second = total;
      else
        cumulativeBytes_.emplace_back(q.step, total);
    }
  }
}

void RunSeries::appendEvent(const EventRow& event) {
  events.push_back(event);
}

double RunSeries::bytesAt(int64_t step) const {
  // Last entry whose step is <= `step`.
  auto it = std::upper_bound(cumulativeBytes_.begin(), cumulativeBytes_.end(), step,
                             [](int64_t s, const std::pair<int64_t, double>& e) { return s < e.first; });
  if (it == cumulativeBytes_.begin()) return 0.0;
  return std::prev(it)->second;
}

bool RunSeries::retime(const RetimeNetwork& network) {
  retimed_.reset();
  if (network.empty()) return true;
  if (traces.empty()) return false;
  retimed_ = retimeTraces(info.id, traces, network);
  return true;
}

double RunSeries::emulatedOf(const SeriesPoint& p) const {
  return retimed_ ? retimed_->emulatedAt(p.step) : p.emulated_s;  // a point at a step is recorded after it
}

double RunSeries::xOf(const SeriesPoint& p, XAxis axis) const {
  switch (axis) {
    case XAxis::Step:
      return double(p.step);
    case XAxis::WallTime:
      return p.wall_s;
    case XAxis::EmulatedTime:
      return emulatedOf(p);
    case XAxis::Bytes:
      return bytesAt(p.step);
  }
  return double(p.step);
}

std::vector<QPointF> RunSeries::points(const std::string& key, XAxis axis) const {
  std::vector<QPointF> out;
  auto it = metrics.find(key);
  if (it == metrics.end()) return out;
  out.reserve(it->second.size());
  for (const auto& p : it->second) out.emplace_back(xOf(p, axis), p.value);
  return out;
}

std::vector<std::pair<double, QString>> RunSeries::markers(XAxis axis) const {
  std::vector<std::pair<double, QString>> out;
  // Time axes take the x of the event's step from the metrics: train/loss's point at that step, else any key's
  // point at that step, else interpolated between the neighbouring points of train/loss (or the longest key).
  const std::vector<SeriesPoint>* ref = nullptr;
  auto loss = metrics.find(metric::kTrainLoss);
  if (loss != metrics.end() && !loss->second.empty())
    ref = &loss->second;
  else
    for (const auto& entry : metrics)
      if (!entry.second.empty() && (!ref || entry.second.size() > ref->size())) ref = &entry.second;
  auto timeOf = [&](const SeriesPoint& p) { return axis == XAxis::WallTime ? p.wall_s : emulatedOf(p); };
  auto pointAt = [](const std::vector<SeriesPoint>& pts, int64_t step) {
    return std::lower_bound(pts.begin(), pts.end(), step, [](const SeriesPoint& p, int64_t s) { return p.step < s; });
  };
  auto timeAt = [&](const EventRow& e) -> double {
    if (!ref) return axis == XAxis::WallTime ? e.wall_s : 0.0;
    const auto& pts = *ref;
    auto hi = pointAt(pts, e.step);
    if (hi != pts.end() && hi->step == e.step) return timeOf(*hi);  // that step's own x
    for (const auto& entry : metrics) {
      auto at = pointAt(entry.second, e.step);
      if (at != entry.second.end() && at->step == e.step) return timeOf(*at);
    }
    if (hi == pts.begin()) return timeOf(*hi);       // before the first point
    if (hi == pts.end()) return timeOf(pts.back());  // after the last point
    const auto& lo = *std::prev(hi);                 // between two points: interpolate by step
    const double t = double(e.step - lo.step) / double(hi->step - lo.step);
    return timeOf(lo) + t * (timeOf(*hi) - timeOf(lo));
  };
  for (const auto& e : events) {
    if (!marksCharts(eventKindOf(e.kind))) continue;
    double x = 0;
    switch (axis) {
      case XAxis::Step:
        x = double(e.step);
        break;
      case XAxis::Bytes:
        x = bytesAt(e.step);
        break;
      case XAxis::WallTime:
      case XAxis::EmulatedTime:
        x = timeAt(e);
        break;
    }
    out.emplace_back(x, settingLabel(e.kind, e.detail_json));
  }
  return out;
}

RunSeries RunSeries::load(const RunStore& store, int64_t runId) {
  auto info = store.run(runId);
  if (!info)
    throw StoreError("no run with id " + std::to_string(runId) + " in " + store.path() +
                     "; it may have been deleted: refresh the runs table");
  RunSeries s;
  s.info = *info;
  auto parsed = parseJsonOrDiscarded(info->config_json);
  s.config = (!parsed.is_discarded() && parsed.is_object()) ? std::move(parsed) : nlohmann::json::object();
  for (const auto& m : store.metrics(runId)) s.append(m);
  for (const auto& e : store.events(runId)) s.appendEvent(e);
  s.traces = store.traces(runId);
  return s;
}

bool RunSeries::isLanguageModel() const {
  const auto task = config.find("task");
  if (task != config.end() && task->is_string())
    if (auto kind = taskKind(task->get<std::string>())) return *kind == TaskKind::LanguageModel;
  return has(metric::kEvalPerplexity) && !has(metric::kEvalAccuracy);
}

}  // namespace ps::ui
