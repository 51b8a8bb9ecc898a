#include "app/ui/runs/CompareCharts.h"

#include <QLocale>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ps::ui {

namespace {

bool isLanguageModel(const RunSeries& run) {
  auto task = run.config.find("task");
  if (task != run.config.end() && task->is_string()) return task->get<std::string>() == "brown_lm";
  return run.has("eval/perplexity") && !run.has("eval/accuracy");
}

// "link3/fwd/rel_error" matches suffix "/fwd/rel_error" with a boundary number.
bool isLinkKey(const std::string& key, const std::string& suffix) {
  if (key.rfind("link", 0) != 0 || key.size() <= 4 + suffix.size()) return false;
  if (key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  const std::string middle = key.substr(4, key.size() - 4 - suffix.size());
  return !middle.empty() && std::all_of(middle.begin(), middle.end(), [](char c) { return c >= '0' && c <= '9'; });
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

std::vector<CompareChart> compareCharts(const std::vector<const RunSeries*>& runs) {
  bool anyLm = false, anyClassifier = runs.empty();
  for (const RunSeries* r : runs) (isLanguageModel(*r) ? anyLm : anyClassifier) = true;
  using Kind = CompareChart::Kind;
  std::vector<CompareChart> charts;
  charts.push_back({QStringLiteral("Train loss"), QStringLiteral("loss"), Kind::Line, {"train/loss"}, {}});
  charts.push_back({QStringLiteral("Eval loss"), QStringLiteral("loss"), Kind::Line, {"eval/loss"}, {}});
  if (anyClassifier)
    charts.push_back({QStringLiteral("Eval accuracy"), QStringLiteral("accuracy"), Kind::Line, {"eval/accuracy"}, {}});
  if (anyLm)
    charts.push_back(
        {QStringLiteral("Eval perplexity"), QStringLiteral("perplexity"), Kind::Line, {"eval/perplexity"}, {}});
  charts.push_back({QStringLiteral("Wire bytes per step"), QStringLiteral("bytes"), Kind::Line, {"bytes/wire"}, {}});
  charts.push_back({QStringLiteral("Compression error, forward"),
                    QStringLiteral("relative error"),
                    Kind::Line,
                    {},
                    "/fwd/rel_error"});
  charts.push_back({QStringLiteral("Compression error, backward"),
                    QStringLiteral("relative error"),
                    Kind::Line,
                    {},
                    "/bwd/rel_error"});
  charts.push_back({QStringLiteral("Step time"), QStringLiteral("seconds"), Kind::Line, {"time/step_s"}, {}});
  charts.push_back({QStringLiteral("Eval loss vs wire bytes"), QStringLiteral("eval loss"), Kind::Pareto, {}, {}});
  return charts;
}

std::vector<std::string> chartKeys(const CompareChart& chart, const RunSeries& run) {
  std::vector<std::string> keys;
  if (chart.kind == CompareChart::Kind::Pareto) {
    if (run.has("eval/loss")) keys.push_back("eval/loss");
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
  if (chart.linkSuffix.empty()) return run.points(keys.front(), axis);
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
  for (const auto& [step, sum] : byStep) out.emplace_back(run.xOf(sum.at, axis), sum.total / sum.count);
  return out;
}

std::optional<QPointF> paretoPoint(const RunSeries& run) {
  auto it = run.metrics.find("eval/loss");
  if (it == run.metrics.end()) return std::nullopt;
  // The last finite eval loss, at the run's total bytes (all steps, not just up to that evaluation).
  for (auto p = it->second.rbegin(); p != it->second.rend(); ++p)
    if (std::isfinite(p->value)) return QPointF(run.bytesAt(std::numeric_limits<int64_t>::max()), p->value);
  return std::nullopt;
}

std::vector<QPointF> paretoCurve(const RunSeries& run) {
  return run.points("eval/loss", XAxis::Bytes);
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
