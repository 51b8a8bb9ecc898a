#include "app/ui/runs/RunRow.h"
#include "app/ui/runs/Units.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/Config.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/core/Metrics.h"
#include "engine/core/RunSummary.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {

using json = nlohmann::json;

json parseObject(const std::string& text) {
  auto j = parseJsonOrDiscarded(text);
  return (!j.is_discarded() && j.is_object()) ? j : json::object();
}

// configValue without the schema: the value at a dot path, or null.
const json& at(const json& config, const std::string& dotted) {
  static const json null;
  const json* node = &config;
  size_t start = 0;
  while (start <= dotted.size()) {
    const size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string part = dotted.substr(start, dot - start);
    if (!node->is_object() || !node->contains(part)) return null;
    node = &(*node)[part];
    start = dot + 1;
  }
  return *node;
}

QVariant text(const json& v) {
  if (v.is_string())
    return v.get<std::string>().empty() ? QVariant() : QVariant(QString::fromStdString(v.get<std::string>()));
  if (v.is_null()) return QVariant();
  return QString::fromStdString(v.dump());
}

QVariant number(double v) {
  return std::isfinite(v) ? QVariant(v) : QVariant();
}
QVariant number(const json& v) {
  return v.is_number() ? number(v.get<double>()) : QVariant();
}

bool sparse(const std::string& m) {
  const MethodSpec* spec = catalogue::codec(m);
  return spec && spec->sparse;
}

// Bits per sent value where the codec has such a thing (the catalogue says): its bits option (a quantizer's), a
// sparsifier's value bits, or the fixed width of a cast or of sign.
QVariant bitsOf(const json& dir) {
  const MethodSpec* m = catalogue::codec(at(dir, "method").is_string() ? at(dir, "method").get<std::string>() : "");
  if (!m) return QVariant();
  if (m->reads("bits")) return number(at(dir, "bits"));
  if (m->reads("value_bits")) return number(at(dir, "value_bits"));
  if (m->valueBits > 0) return double(m->valueBits);
  return QVariant();
}

QVariant kOf(const json& dir) {
  const auto& m = at(dir, "method");
  return (m.is_string() && sparse(m.get<std::string>())) ? number(at(dir, "k")) : QVariant();
}

}  // namespace

QString runColumnTitle(RunColumn c) {
  // clang-format off
  static const char* titles[kRunColumnCount] = {
      "", "ID", "Name", "Status", "Tags", "Notes", "Created", "Task", "Stages", "Micro-batches", "Schedule",
      "Fwd method", "Fwd K", "Fwd bits", "Fwd feedback", "Bwd method", "Bwd K", "Bwd bits", "Bwd feedback",
      "Bandwidth (Mbit/s)", "Latency (ms)", "LR", "Steps", "Train loss", "Eval loss", "Eval acc / ppl",
      "Best acc / ppl", "Wire bytes", "Ratio", "Wall time", "Time to target"};
  // clang-format on
  return int(c) >= 0 && int(c) < kRunColumnCount ? QString::fromLatin1(titles[int(c)]) : QString();
}

QString runColumnToolTip(RunColumn c) {
  switch (c) {
    case RunColumn::Visible:
      return QStringLiteral("Colour in charts; untick to hide the run from comparisons");
    case RunColumn::FwdK:
    case RunColumn::BwdK:
      return QStringLiteral("Fraction of the elements a sparsifier keeps");
    case RunColumn::FwdBits:
    case RunColumn::BwdBits:
      return QStringLiteral("Bits per sent value (quantizer bits, or a sparsifier's value bits)");
    case RunColumn::EvalMetric:
      return QStringLiteral("Final eval accuracy (classifiers) or perplexity (language models)");
    case RunColumn::BestEvalMetric:
      return QStringLiteral("Best eval accuracy seen (highest), or perplexity (lowest)");
    case RunColumn::Ratio:
      return QStringLiteral("Compression ratio: raw bytes / wire bytes");
    case RunColumn::TrainLoss:
      return QStringLiteral("Final train loss (latest while running)");
    case RunColumn::TimeToTarget:
      return QStringLiteral(
          "Emulated time to the compare view's target accuracy (perplexity), at the network it "
          "re-times for (the run's own while that is unticked)");
    default:
      return runColumnTitle(c);
  }
}

namespace {

// `config` with every mid-run change of a compression key applied, as the "setting" events record them.
json withChanges(const json& config, const std::vector<EventRow>& events) {
  json out = config;
  for (const EventRow& e : events) {
    if (eventKindOf(e.kind) != EventKind::Setting) continue;
    const json detail = parseObject(e.detail_json);
    const json& key = at(detail, "key");
    if (!key.is_string() || key.get<std::string>().rfind("compression.", 0) != 0 || !detail.contains("to")) continue;
    try {
      setConfigValue(out, key.get<std::string>(), detail["to"]);
    } catch (const std::exception&) {  // a stored config of another shape, or a key this code no longer has
    }
  }
  return out;
}

}  // namespace

double RunRow::summaryNumber(const char* key, double fallback) const {
  auto it = summary.find(key);
  return (it != summary.end() && it->is_number()) ? it->get<double>() : fallback;
}

RunRow RunRow::starting(const nlohmann::json& config) {
  RunInfo info;
  const json& name = at(config, "run.name");
  const json& task = at(config, "task");
  const json& stages = at(config, "pipeline.stages");
  const json& tags = at(config, "run.tags");
  if (name.is_string() && !name.get<std::string>().empty())
    info.name = name.get<std::string>();
  else  // as the session names an unnamed run
    info.name = (task.is_string() ? task.get<std::string>() : std::string("run")) + " " +
                (stages.is_number_integer() ? std::to_string(stages.get<int>()) : std::string("?")) + "-stage";
  info.status = "starting";
  info.created = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
  info.config_json = config.dump();
  info.tags = tags.is_string() ? tags.get<std::string>() : std::string();
  RunRow row;
  row.info = info;
  row.config = row.finalConfig = config;
  const auto kind = task.is_string() ? taskKind(task.get<std::string>()) : std::nullopt;
  row.languageModel = kind && *kind == TaskKind::LanguageModel;
  row.readFacts(nullptr);
  return row;
}

RunRow RunRow::read(const RunStore& store, const RunInfo& info, const RunRow* previous) {
  RunRow row;
  row.info = info;
  row.config = parseObject(info.config_json);
  row.summary = parseObject(info.summary_json);
  const json& task = at(row.config, "task");
  const auto kind = task.is_string() ? taskKind(task.get<std::string>()) : std::nullopt;
  row.languageModel = kind ? *kind == TaskKind::LanguageModel
                           : !RunSummary::fromJson(row.summary).classifier;

  // A finished run's metrics no longer change: reuse what the last refresh read.
  if (previous && previous->info.id == info.id && previous->info.status == info.status &&
      info.status != run_status::kRunning) {
    row.bestEval = previous->bestEval;
    row.lastEvalLoss = previous->lastEvalLoss, row.lastEvalMetric = previous->lastEvalMetric;
    row.lastTrainLoss = previous->lastTrainLoss, row.lastStep = previous->lastStep, row.lastWall = previous->lastWall;
    row.rawBytes = previous->rawBytes, row.wireBytes = previous->wireBytes;
    row.finalConfig = previous->finalConfig;
    row.readFacts(previous);
    return row;
  }
  row.finalConfig = withChanges(row.config, store.events(info.id));
  const std::string metricKey = row.languageModel ? metric::kEvalPerplexity : metric::kEvalAccuracy;
  for (const auto& m : store.metrics(info.id, "eval/")) {  // a few points per run
    if (!std::isfinite(m.value)) continue;
    if (m.key == metric::kEvalLoss) row.lastEvalLoss = m.value;
    if (m.key != metricKey) continue;
    row.lastEvalMetric = m.value;
    if (std::isnan(row.bestEval))
      row.bestEval = m.value;
    else
      row.bestEval = row.languageModel ? std::min(row.bestEval, m.value) : std::max(row.bestEval, m.value);
  }
  // Totals and the latest figures come from the summary once the run has ended; read them while it runs.
  if (info.status == run_status::kRunning || !row.summary.contains(summary_key::kBytesWire) ||
      !row.summary.contains(summary_key::kTrainLoss)) {
    for (const auto& m : store.metrics(info.id, metric::kTrainLoss)) {
      if (m.key != metric::kTrainLoss) continue;
      row.lastTrainLoss = m.value, row.lastStep = double(m.step), row.lastWall = m.wall_s;
    }
    double raw = 0, wire = 0;
    bool any = false;
    for (const auto& m : store.metrics(info.id, "bytes/")) {
      if (!std::isfinite(m.value)) continue;
      if (m.key == metric::kRawBytes) raw += m.value, any = true;
      if (m.key == metric::kWireBytes) wire += m.value, any = true;
    }
    if (any) row.rawBytes = raw, row.wireBytes = wire;
  }
  row.readFacts(previous);
  return row;
}

void RunRow::readFacts(const RunRow* previous) {
  const RunInfo* was = previous ? &previous->info : nullptr;
  const bool same = was && was->id == info.id && was->name == info.name && was->tags == info.tags &&
                    was->notes == info.notes && was->status == info.status && was->summary_json == info.summary_json;
  facts = same ? previous->facts : RunFacts::of(info);  // parsing the config is the costly part
  // A run still going has no summary yet: its latest figures stand in.
  const std::pair<const char*, double> live[] = {
      {"steps", lastStep},    {"train_loss", lastTrainLoss},
      {"loss", lastEvalLoss}, {languageModel ? "perplexity" : "accuracy", lastEvalMetric},
      {"wire", wireBytes},    {"raw", rawBytes},
      {"wall", lastWall}};
  for (const auto& [field, value] : live)
    if (std::isfinite(value) && !facts.numbers.count(field)) facts.set(field, value);
  // A method switched to mid-run is found too, as the table shows it ("topk → quantize").
  for (const auto& [column, field] : {std::pair{RunColumn::FwdMethod, "fwd"}, std::pair{RunColumn::BwdMethod, "bwd"}}) {
    const std::string method = directionSetting(finalConfig, column).toString().toStdString();
    facts.addText("method", method);
    facts.addText(field, method);
  }
}

namespace {

// One direction's four columns, in the order the table shows them: method, K, bits, feedback.
QVariant directionValue(const json& direction, int field) {
  switch (field) {
    case 0: return text(at(direction, "method"));
    case 1: return kOf(direction);
    case 2: return bitsOf(direction);
    default: return text(at(direction, "feedback"));
  }
}

}  // namespace

QVariant RunRow::value(RunColumn c) const {
  if (c < RunColumn::Task) return recordValue(c);
  if (c < RunColumn::Steps) return settingValue(c);
  return resultValue(c);
}

// What the store keeps about the run itself.
QVariant RunRow::recordValue(RunColumn c) const {
  const auto optional = [](const std::string& s) {
    return s.empty() ? QVariant() : QVariant(QString::fromStdString(s));
  };
  switch (c) {
    case RunColumn::Id: return double(info.id);
    case RunColumn::Name: return optional(info.name);
    case RunColumn::Status: return QString::fromStdString(info.status);
    case RunColumn::Tags: return optional(info.tags);
    case RunColumn::Notes: return optional(info.notes);
    case RunColumn::Created: return optional(info.created);
    default: return QVariant();  // the visibility tick has no value
  }
}

QVariant RunRow::directionSetting(const json& settings, RunColumn c) const {
  if (c >= RunColumn::FwdMethod && c <= RunColumn::FwdFeedback)
    return directionValue(at(settings, "compression.forward"), int(c) - int(RunColumn::FwdMethod));
  if (c >= RunColumn::BwdMethod && c <= RunColumn::BwdFeedback)
    return directionValue(at(settings, "compression.backward"), int(c) - int(RunColumn::BwdMethod));
  return QVariant();
}

// What the run was configured with as it started.
QVariant RunRow::settingValue(RunColumn c) const {
  if (c >= RunColumn::FwdMethod && c <= RunColumn::BwdFeedback) return directionSetting(config, c);
  switch (c) {
    case RunColumn::Task: return text(at(config, "task"));
    case RunColumn::Stages: return number(at(config, "pipeline.stages"));
    case RunColumn::Microbatches: return number(at(config, "pipeline.microbatches"));
    case RunColumn::Schedule: return text(at(config, "pipeline.schedule"));
    case RunColumn::Bandwidth: return number(at(config, "link.bandwidth_mbps"));
    case RunColumn::Latency: return number(at(config, "link.latency_ms"));
    case RunColumn::Lr: return number(at(config, "train.lr"));
    default: return QVariant();
  }
}

// What the run measured: the summary where it has finished, the latest metrics while it runs.
QVariant RunRow::resultValue(RunColumn c) const {
  switch (c) {
    case RunColumn::Steps:
      return number(summaryNumber(summary_key::kSteps, lastStep));
    case RunColumn::TrainLoss:
      return number(summaryNumber(summary_key::kTrainLoss, lastTrainLoss));
    case RunColumn::EvalLoss:
      return number(summaryNumber(summary_key::kEvalLoss, lastEvalLoss));
    case RunColumn::EvalMetric:
      return number(
          summaryNumber(languageModel ? summary_key::kEvalPerplexity : summary_key::kEvalAccuracy, lastEvalMetric));
    case RunColumn::BestEvalMetric: return number(bestEval);
    case RunColumn::WireBytes:
      return number(summaryNumber(summary_key::kBytesWire, wireBytes));
    case RunColumn::Ratio: {
      const double raw = summaryNumber(summary_key::kBytesRaw, rawBytes),
                   wire = summaryNumber(summary_key::kBytesWire, wireBytes);
      return wire > 0 ? number(raw / wire) : QVariant();
    }
    case RunColumn::WallTime:
      return number(summaryNumber(summary_key::kWallSeconds, lastWall));
    default: return QVariant();
  }
}

QString RunRow::display(RunColumn c) const {
  const QString start = format(c, value(c));
  if (c < RunColumn::FwdMethod || c > RunColumn::BwdFeedback) return start;
  const QString end = format(c, directionSetting(finalConfig, c));
  return end == start ? start : start + QStringLiteral(" → ") + end;
}

QString RunRow::format(RunColumn c, const QVariant& v) const {
  if (!v.isValid()) return QString();
  if (v.userType() != QMetaType::Double) {
    if (c != RunColumn::Created) return v.toString();
    const auto t = QDateTime::fromString(v.toString(), Qt::ISODate);
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : v.toString();
  }
  const double d = v.toDouble();
  switch (c) {
    case RunColumn::FwdK:
    case RunColumn::BwdK:
      return QString::number(d * 100, 'g', 3) + QStringLiteral(" %");
    case RunColumn::EvalMetric:
    case RunColumn::BestEvalMetric:
      return languageModel ? QString::number(d, 'f', 2) : QString::number(d * 100, 'f', 2) + QStringLiteral(" %");
    case RunColumn::TrainLoss:
    case RunColumn::EvalLoss:
      return QString::number(d, 'f', 4);
    case RunColumn::WireBytes:
      return humanBytes(d);
    case RunColumn::Ratio:
      return QString::number(d, 'f', 1) + QStringLiteral(" ×");
    case RunColumn::WallTime:
      return humanDuration(d);
    case RunColumn::Lr:
      return QString::number(d, 'g', 4);
    default:
      return QString::number(d, 'g', 10);
  }
}

}  // namespace ps::ui
