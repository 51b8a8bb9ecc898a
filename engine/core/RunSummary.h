#pragma once
// A run's summary: the last line `pipesqueeze-cli train --json` prints, kept with the run in the store, and read by
// the run filter, the runs table and the claim suites. It travels and is stored as JSON under the keys below (the
// suites' metric names are these keys too); every figure may be missing (a run that ended before its first
// evaluation, a run of an older build), and a stored summary is untrusted: a value of the wrong type reads as missing.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace ps {

namespace summary_key {
inline constexpr const char* kRunId = "run_id";
inline constexpr const char* kStatus = "status";
inline constexpr const char* kReason = "reason";
inline constexpr const char* kSteps = "steps";
inline constexpr const char* kTrainLoss = "train_loss";  // mean of the last steps' training loss
inline constexpr const char* kEvalLoss = "eval_loss";    // the headline evaluation (as compression.inference says)
inline constexpr const char* kEvalAccuracy = "eval_accuracy";      // classifiers
inline constexpr const char* kEvalPerplexity = "eval_perplexity";  // language models
inline constexpr const char* kCompressed = "_compressed";          // suffixes of the two evaluations (null: not made)
inline constexpr const char* kUncompressed = "_uncompressed";
inline constexpr const char* kBytesRaw = "bytes_raw";
inline constexpr const char* kBytesWire = "bytes_wire";
inline constexpr const char* kWallSeconds = "wall_seconds";
inline constexpr const char* kEmulatedSeconds = "emulated_seconds";
}  // namespace summary_key

// A run's status: running, then how it ended.
namespace run_status {
inline constexpr const char* kRunning = "running";
inline constexpr const char* kFinished = "finished";  // every step it asked for
inline constexpr const char* kStopped = "stopped";    // by the user, a signal, or eval.stop_at_accuracy
inline constexpr const char* kDiverged = "diverged";  // the loss or a payload stopped being finite: a result too
inline constexpr const char* kFailed = "failed";      // an error ended it (the reason says which)
// Whether the run's figures answer a question: it finished, or diverged (which says something of its settings).
inline bool isResult(const std::string& status) {
  return status == kFinished || status == kDiverged;
}
}  // namespace run_status

// One evaluation's figures: accuracy for a classifier, perplexity for a language model.
struct EvalFigures {
  std::optional<double> loss, accuracy, perplexity;
};

struct RunSummary {
  int64_t run_id = 0;
  std::string status, reason;
  std::optional<int64_t> steps;
  std::optional<double> train_loss;
  bool classifier = true;  // which figure its evaluations carry: accuracy, or perplexity
  EvalFigures eval;        // the headline: the compressed evaluation when compression.inference, else the plain one
  EvalFigures compressed, uncompressed;
  std::optional<uint64_t> bytes_raw, bytes_wire;  // every link's payload bytes, uncompressed and as sent
  std::optional<double> wall_seconds, emulated_seconds;

  nlohmann::json toJson() const;
  static RunSummary fromJson(const nlohmann::json& j);
  // Raw over wire bytes, when both are known and some bytes crossed.
  std::optional<double> compressionRatio() const;
};

}  // namespace ps
