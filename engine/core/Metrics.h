#pragma once
// The names of what a run records, in one place: the metric keys the run store holds, the link-key format
// ("link<boundary>/<fwd|bwd|grad>/<leaf>") that links, the store sink, the live panel and the compare view build and
// parse, and what kind of model a task trains. Torch-free and header-only: the Qt views include it too.
#include "engine/core/Telemetry.h"

#include <cctype>
#include <optional>
#include <string>

namespace ps::metric {

inline constexpr const char* kTrainLoss = "train/loss";
inline constexpr const char* kTrainAccuracy = "train/accuracy";
inline constexpr const char* kTrainLr = "train/lr";
inline constexpr const char* kTrainEpoch = "train/epoch";
inline constexpr const char* kEvalLoss = "eval/loss";
inline constexpr const char* kEvalAccuracy = "eval/accuracy";
inline constexpr const char* kEvalPerplexity = "eval/perplexity";
inline constexpr const char* kStepSeconds = "time/step_s";
inline constexpr const char* kComputeSeconds = "time/compute_s";
inline constexpr const char* kCodecSeconds = "time/codec_s";
inline constexpr const char* kLinkSeconds = "time/link_s";
inline constexpr const char* kEmulatedStepSeconds = "time/emulated_step_s";
// Multi-process runs only: the wall time of a step's control round on rank 0 (see StepRecord::control_s).
inline constexpr const char* kControlSeconds = "time/control_s";
inline constexpr const char* kRawBytes = "bytes/raw";
inline constexpr const char* kWireBytes = "bytes/wire";
// An evaluation without compression records its metrics under the same key with this suffix.
inline constexpr const char* kUncompressedSuffix = "_uncompressed";
inline std::string uncompressed(const std::string& evalKey) { return evalKey + kUncompressedSuffix; }

// Per link and direction, after "link<b>/<dir>/".
namespace leaf {
inline constexpr const char* kRawBytes = "raw_bytes";
inline constexpr const char* kWireBytes = "wire_bytes";
inline constexpr const char* kRatio = "ratio";
inline constexpr const char* kBitsPerElement = "bits_per_element";
inline constexpr const char* kDensity = "density";
inline constexpr const char* kRelError = "rel_error";
inline constexpr const char* kRelErrorCompensated = "rel_error_compensated";
inline constexpr const char* kCodecSeconds = "codec_s";
inline constexpr const char* kModelledSeconds = "modelled_s";
inline constexpr const char* kValues = "values";    // histogram of what was sent
inline constexpr const char* kDecoded = "decoded";  // histogram of what arrived
}  // namespace leaf

// Reads the index of at most four digits that starts at `i` in `s` into `value`; returns where it ends (`i` when no
// digit is there). A boundary's or a stage's number in a metric name.
inline size_t readIndex(const std::string& s, size_t i, int& value) {
  const size_t start = i;
  value = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 4)
    value = value * 10 + (s[i++] - '0');
  return i;
}

// "link1/bwd": one direction of one boundary (for Gradients, of one stage's replica exchange).
inline std::string linkName(int boundary, Direction d) { return "link" + std::to_string(boundary) + "/" + directionName(d); }
inline std::string linkKey(int boundary, Direction d, const std::string& leafName) {
  return linkName(boundary, d) + "/" + leafName;
}

// "grad/stage2": the histogram of one stage's weight gradients, and the stage a histogram name is of (nullopt for
// any other name).
inline constexpr const char* kGradHistogramPrefix = "grad/stage";
inline std::string gradHistogramName(int stage) { return kGradHistogramPrefix + std::to_string(stage); }
inline std::optional<int> gradHistogramStage(const std::string& name) {
  const size_t digits = std::char_traits<char>::length(kGradHistogramPrefix);
  if (name.compare(0, digits, kGradHistogramPrefix) != 0) return std::nullopt;
  int stage = 0;
  const size_t end = readIndex(name, digits, stage);
  if (end == digits || end != name.size()) return std::nullopt;
  return stage;
}

struct LinkKey {
  int boundary = 0;
  Direction direction = Direction::Forward;
  std::string leaf;
};

// The parts of a link key; nullopt for any other key.
inline std::optional<LinkKey> parseLinkKey(const std::string& key) {
  if (key.rfind("link", 0) != 0) return std::nullopt;
  int boundary = 0;
  const size_t i = readIndex(key, 4, boundary);
  if (i == 4 || i >= key.size() || key[i] != '/') return std::nullopt;
  const size_t slash = key.find('/', i + 1);
  if (slash == std::string::npos || slash + 1 >= key.size()) return std::nullopt;
  const std::string dir = key.substr(i + 1, slash - i - 1);
  LinkKey k;
  k.boundary = boundary;
  if (dir == "fwd") k.direction = Direction::Forward;
  else if (dir == "bwd") k.direction = Direction::Backward;
  else if (dir == "grad") k.direction = Direction::Gradients;
  else return std::nullopt;
  k.leaf = key.substr(slash + 1);
  return k;
}

}  // namespace ps::metric

namespace ps {

// One value of one metric at one step, with the run's wall and emulated clocks then (what the store keeps).
struct MetricPoint {
  int64_t step;
  std::string key;  // e.g. "train/loss", "link0/fwd/wire_bytes"
  double value;
  double wall_s;
  double emulated_s;
};

// What a task trains, which decides the charts and columns that make sense (accuracy or perplexity).
enum class TaskKind { Classifier, LanguageModel };

struct TaskInfo {
  const char* name;
  TaskKind kind;
  const char* help;
};

inline const TaskInfo (&tasks())[3] {
  static const TaskInfo all[3] = {
      {"fashion_mnist", TaskKind::Classifier, "Fashion-MNIST images, a residual CNN"},
      {"brown_lm", TaskKind::LanguageModel, "the Brown corpus, a character-level transformer"},
      {"synthetic", TaskKind::Classifier, "a small synthetic classification task (tests, smoke runs)"},
  };
  return all;
}

inline std::optional<TaskKind> taskKind(const std::string& task) {
  for (const auto& t : tasks())
    if (task == t.name) return t.kind;
  return std::nullopt;
}

}  // namespace ps
