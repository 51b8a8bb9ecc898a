#include "engine/core/RunSummary.h"

#include <cmath>

namespace ps {
namespace {

using nlohmann::json;
namespace k = summary_key;

template <typename T>
json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> number(const json& j, const std::string& key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<uint64_t> count(const json& j, const std::string& key) {
  const auto v = number(j, key);
  if (!v || !(*v >= 0) || !(*v < 1.8e19)) return std::nullopt;
  return uint64_t(*v);
}

void writeEval(json& out, const EvalFigures& e, bool classifier, const std::string& suffix) {
  out[std::string(k::kEvalLoss) + suffix] = orNull(e.loss);
  if (classifier)
    out[std::string(k::kEvalAccuracy) + suffix] = orNull(e.accuracy);
  else
    out[std::string(k::kEvalPerplexity) + suffix] = orNull(e.perplexity);
}

EvalFigures readEval(const json& j, const std::string& suffix) {
  EvalFigures e;
  e.loss = number(j, std::string(k::kEvalLoss) + suffix);
  e.accuracy = number(j, std::string(k::kEvalAccuracy) + suffix);
  e.perplexity = number(j, std::string(k::kEvalPerplexity) + suffix);
  return e;
}

}  // namespace

json RunSummary::toJson() const {
  json out;
  out[k::kRunId] = run_id;
  out[k::kStatus] = status;
  if (!reason.empty()) out[k::kReason] = reason;
  out[k::kSteps] = orNull(steps);
  out[k::kTrainLoss] = orNull(train_loss);
  writeEval(out, eval, classifier, "");
  writeEval(out, compressed, classifier, k::kCompressed);
  writeEval(out, uncompressed, classifier, k::kUncompressed);
  out[k::kBytesRaw] = orNull(bytes_raw);
  out[k::kBytesWire] = orNull(bytes_wire);
  out[k::kWallSeconds] = orNull(wall_seconds);
  out[k::kEmulatedSeconds] = orNull(emulated_seconds);
  return out;
}

RunSummary RunSummary::fromJson(const json& j) {
  RunSummary s;
  if (!j.is_object()) return s;
  if (auto id = number(j, k::kRunId)) s.run_id = int64_t(*id);
  if (auto it = j.find(k::kStatus); it != j.end() && it->is_string()) s.status = it->get<std::string>();
  if (auto it = j.find(k::kReason); it != j.end() && it->is_string()) s.reason = it->get<std::string>();
  if (auto n = number(j, k::kSteps); n && std::isfinite(*n)) s.steps = int64_t(*n);
  s.train_loss = number(j, k::kTrainLoss);
  // A language model's summary names perplexities; a classifier's (and one that says neither) accuracies.
  s.classifier = !(j.contains(k::kEvalPerplexity) && !j.contains(k::kEvalAccuracy));
  s.eval = readEval(j, "");
  s.compressed = readEval(j, k::kCompressed);
  s.uncompressed = readEval(j, k::kUncompressed);
  s.bytes_raw = count(j, k::kBytesRaw);
  s.bytes_wire = count(j, k::kBytesWire);
  s.wall_seconds = number(j, k::kWallSeconds);
  s.emulated_seconds = number(j, k::kEmulatedSeconds);
  return s;
}

std::optional<double> RunSummary::compressionRatio() const {
  if (!bytes_raw || !bytes_wire || *bytes_wire == 0) return std::nullopt;
  return double(*bytes_raw) / double(*bytes_wire);
}

}  // namespace ps
