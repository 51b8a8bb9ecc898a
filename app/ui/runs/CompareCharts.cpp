#include "app/ui/runs/CompareCharts.h"
#include "engine/core/Metrics.h"

#include "engine/telemetry/Charts.h"

#include <QLocale>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ps::ui {

namespace {

// "link3/fwd/rel_error" has suffix "/fwd/rel_error".
bool isLinkKey(const std::string& key, const std::string& suffix) {
  const auto link = metric::parseLinkKey(key);
  return link && "/" + std::string(directionName(link->direction)) + "/" + link->leaf == suffix;
}

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString csvNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("nan");
  return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

}  // namespace

// The chart table's compare charts: one line per run, the first of a chart's keys the run has, or the mean over a
// run's links of the chart's leaf in its direction.
std::vector<CompareChart> compareCharts(const std::vector<const RunSeries*>& runs) {
  bool anyLm = false, anyClassifier = runs.empty();
  for (const RunSeries* r : runs) (r->isLanguageModel() ? anyLm : anyClassifier) = true;
  using Kind = CompareChart::Kind;
  std::vector<CompareChart> charts;
  for (const ChartSpec& spec : ps::charts()) {
    if (!spec.compare()) continue;
    if (spec.kinds == ChartSpec::Kinds::Classifier && !anyClassifier) continue;
    if (spec.kinds == ChartSpec::Kinds::LanguageModel && !anyLm) continue;
    CompareChart c{QString::fromStdString(spec.title), QString::fromStdString(spec.unit),
                   spec.pareto ? Kind::Pareto : Kind::Line, {}, {}};
    c.scale = spec.scale;
    for (const auto& s : spec.series) c.keys.push_back(s.key);
    if (c.keys.empty() && !spec.linkLeaf.empty() && spec.directions.size() == 1) {
      c.linkSuffix = "/" + std::string(directionName(spec.directions.front())) + "/" + spec.linkLeaf;
      // The replicas' gradients only where a run has them; forward and backward always (a run without them is
      // uncompressed there, which the chart shows as no line).
      if (spec.directions.front() == Direction::Gradients &&
          std::none_of(runs.begin(), runs.end(), [&](const RunSeries* r) { return !chartKeys(c, *r).empty(); }))
        continue;
    }
    charts.push_back(std::move(c));
  }
  return charts;
}

std::vector<std::string> chartKeys(const CompareChart& chart, const RunSeries& run) {
  std::vector<std::string> keys;
  if (chart.kind == CompareChart::Kind::Pareto) {
    if (run.has(metric::kEvalLoss)) keys.push_back(metric::kEvalLoss);
  } else if (!chart.linkSuffix.empty()) {
    for (const auto& entry : run.metrics)
      if (isLinkKey(entry.first, chart.linkSuffix)) keys.push_back(entry.first);
  } else {
    for (const auto& k : chart.keys)
      if (run.has(k)) {
        keys.push_back(k);
        break;
      }
  }
  return keys;
}

std::vector<QPointF> chartLine(const CompareChart& chart, const RunSeries& run, XAxis axis) {
  const auto keys = chartKeys(chart, run);
  if (keys.empty()) return {};
  if (chart.linkSuffix.empty()) {
    auto points = run.points(keys.front(), axis);
    if (chart.scale != 1)
      for (QPointF& p : points) p.setY(p.y() * chart.scale);
    return points;
  }
  // Mean over the links at each step; the step's x comes from the first link's point.
  struct Sum {
    double total = 0;
    int count = 0;
    SeriesPoint at;
  };
  std::map<int64_t, Sum> byStep;
  for (const auto& key : keys)
    for (const auto& p : run.metrics.at(key)) {
      if (!std::isfinite(p.value)) continue;
      auto [it, fresh] = byStep.try_emplace(p.step);
      if (fresh) it->second.at = p;
      it->second.total += p.value;
      ++it->second.count;
    }
  std::vector<QPointF> out;
  out.reserve(byStep.size());
  for (const auto& [step, sum] : byStep) out.emplace_back(run.xOf(sum.at, axis), chart.scale * sum.total / sum.count);
  return out;
}

std::optional<QPointF> paretoPoint(const RunSeries& run) {
  auto it = run.metrics.find(metric::kEvalLoss);
  if (it == run.metrics.end()) return std::nullopt;
  // The last finite eval loss, at the run's total bytes (all steps, not just up to that evaluation).
  for (auto p = it->second.rbegin(); p != it->second.rend(); ++p)
    if (std::isfinite(p->value)) return QPointF(run.bytesAt(std::numeric_limits<int64_t>::max()), p->value);
  return std::nullopt;
}

std::vector<QPointF> paretoCurve(const RunSeries& run) {
  return run.points(metric::kEvalLoss, XAxis::Bytes);
}

QString writeVisibleCsv(const QString& path, const std::vector<CsvChart>& charts,
                        const std::vector<const RunSeries*>& runs, XAxis axis) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
    return QStringLiteral("Could not write %1: %2. Choose a folder you can write to.").arg(path, file.errorString());
  QByteArray out = "run_id,run_name,key,step,x,value\n";
  for (const auto& c : charts) {
    if (!c.chart || c.chart->kind != CompareChart::Kind::Line) continue;
    for (const RunSeries* run : runs) {
      const QString prefix = QString::number(run->info.id) + QLatin1Char(',') +
                             csvField(QString::fromStdString(run->info.name)) + QLatin1Char(',');
      for (const auto& key : chartKeys(*c.chart, *run))
        for (const auto& p : run->metrics.at(key)) {
          const double x = run->xOf(p, axis);
          if (c.range && (x < c.range->first || x > c.range->second)) continue;
          out += (prefix + csvField(QString::fromStdString(key)) + QLatin1Char(',') + QString::number(p.step) +
                  QLatin1Char(',') + csvNumber(x) + QLatin1Char(',') + csvNumber(p.value) + QLatin1Char('\n'))
                     .toUtf8();
        }
    }
  }
  file.write(out);
  if (!file.commit())
    return QStringLiteral("Could not write %1: %2. Check the free space and permissions.")
        .arg(path, file.errorString());
  return QString();
}

}  // namespace ps::ui
