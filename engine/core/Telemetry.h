#pragma once
// Telemetry: plain value structs that flow out of a training session to any number of sinks.
// No torch, no Qt: the run store, the CLI and the GUI all consume these.
#include <nlohmann/json.hpp>

#include "engine/core/Direction.h"
#include "engine/core/StepTrace.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace ps {

// One link (stage boundary) in one direction over one step, or one stage's weight-gradient exchange among its
// replicas (direction Gradients, `boundary` is then the stage; wire bytes are what the replicas sent to their
// peers, and raw_bytes what a dense float32 ring all-reduce would have sent). With replicas, a link's figures are
// summed over the replicas' copies of it.
struct LinkTraffic {
  int boundary = 0;  // between stage `boundary` and `boundary + 1`; the stage for Gradients
  Direction direction = Direction::Forward;
  uint64_t raw_bytes = 0;   // float32 cost of what crossed
  uint64_t wire_bytes = 0;  // encoded payload sizes, headers included
  uint64_t elements = 0;
  uint64_t nonzeros = 0;    // elements the payloads carried values for
  uint32_t messages = 0;
  double encode_s = 0, decode_s = 0;  // real CPU time of the codec
  double modelled_s = 0;              // latency + 8 * bytes / bandwidth, summed over messages
  double rel_error = 0;               // ||x_hat - x|| / ||x||, over the step's messages
  double rel_error_compensated = 0;   // the same measured on the compensated input
  // The sums behind the two errors (||x_hat - x||^2 and ||x||^2 over the messages, plain and compensated), so
  // merging replicas' or ranks' figures gives the error of all their messages together, not a weighted guess.
  double err_sq = 0, ref_sq = 0, err_sq_compensated = 0, ref_sq_compensated = 0;
  // What the direction's adaptive controller has the sender measure, under the names the controllers read
  // (engine/compress/Adaptive.h): each a sum over the step's messages, summed again when the figures of replicas,
  // ranks or stages merge. Empty where no controller watches the direction.
  std::map<std::string, double> measures;
  std::string method;                 // codec description in force this step
  std::vector<std::string> resets;    // compensation state reset this step, and why

  // Sets the four sums and the two relative errors they give (0 where nothing was measured).
  void setErrorSums(double err, double ref, double errCompensated, double refCompensated) {
    err_sq = err, ref_sq = ref, err_sq_compensated = errCompensated, ref_sq_compensated = refCompensated;
    rel_error = ref > 0 ? std::sqrt(err / ref) : 0.0;
    rel_error_compensated = refCompensated > 0 ? std::sqrt(errCompensated / refCompensated) : 0.0;
  }

  double ratio() const { return wire_bytes ? double(raw_bytes) / double(wire_bytes) : 1.0; }
  double bitsPerElement() const { return elements ? 8.0 * double(wire_bytes) / double(elements) : 0.0; }
  double density() const { return elements ? double(nonzeros) / double(elements) : 0.0; }
};

struct StepRecord {
  int64_t step = 0;  // 1-based, counts optimizer steps
  int64_t epoch = 0;
  int64_t samples = 0;   // in this step
  double loss = 0;       // mean training loss of the batch
  double accuracy = -1;  // classifier batch accuracy, -1 when not a classifier
  double lr = 0;
  double wall_s = 0;          // since the run started
  double step_s = 0;          // wall time of this step
  double compute_s = 0;       // forward + backward + optimizer, summed over stages
  double codec_s = 0;         // encode + decode, summed over links
  double link_s = 0;          // modelled link time, summed over messages
  double emulated_step_s = 0; // critical path of the schedule with modelled links
  double emulated_s = 0;      // cumulative emulated time
  // Multi-process runs: wall seconds this rank spent on the step's control round, which the link model leaves out:
  // agreeing on the commands before it, flushing its sends and gathering every rank's step report after it (the
  // gather also waits for the slowest rank). -1 in one process.
  double control_s = -1;
  std::vector<LinkTraffic> links;
  std::shared_ptr<const StepTrace> trace;  // what emulated_step_s was made of; the store keeps it for re-timing
};

struct EvalRecord {
  int64_t step = 0;
  double wall_s = 0, emulated_s = 0;
  bool compressed = true;  // evaluated through the links' codecs
  double loss = 0;
  double accuracy = -1;    // classifier
  double perplexity = -1;  // language model
  int64_t samples = 0;
};

struct HistogramRecord {
  int64_t step = 0;
  std::string name;  // "grad/stage0", "link0/fwd/values"
  double lo = 0, hi = 0;
  std::vector<float> counts;
};

// What an event on a run's timeline is. Events travel and are stored by name (the run store keeps the text, so
// the runs of every build read alike); these are the names, and eventName/eventKindOf the only spelling of them.
enum class EventKind {
  Start,       // the run began (detail: its configuration's summary)
  Pause,       // paused by a command, until the Resume at the same or a later step
  Resume,
  Setting,     // a setting changed mid-run (detail: key, from, to; source and reason when a controller changed it)
  Reset,       // a link direction's compensation state was dropped (detail: boundary, direction, reason)
  Adapt,       // an adaptive controller decided and kept the factor it sends (detail: its measurements)
  Checkpoint,  // the model was saved (detail: path)
  End,         // the run ended; named after its status: finished, stopped, diverged or failed
  Unknown,     // a name this build does not write (a newer build's, read from a store)
};
const char* eventName(EventKind kind);  // "start", "pause", ...; End has no single name: "finished"
EventKind eventKindOf(const std::string& name);
// The events every chart of a run marks, live or stored, on any axis: what changed mid-run (settings, pauses and
// resumes) and the compensation resets those changes caused.
inline bool marksCharts(EventKind kind) {
  return kind == EventKind::Setting || kind == EventKind::Pause || kind == EventKind::Resume || kind == EventKind::Reset;
}

struct EventRecord {
  int64_t step = 0;
  double wall_s = 0;
  std::string kind;  // eventName(EventKind), or the run's status for its End
  nlohmann::json detail = nlohmann::json::object();
  EventKind type() const { return eventKindOf(kind); }
};

// Life cycle of the run: "running" at the start, then finished / stopped / diverged / failed.
struct StatusRecord {
  int64_t run_id = 0;
  std::string status;
  std::string reason;
  nlohmann::json summary = nlohmann::json::object();
};

// Where a run is between two steps, for whoever watches it live: an evaluation pass and how many of its batches
// are done. Not stored: once the pass ends, its EvalRecord says everything that lasts.
struct ProgressRecord {
  int64_t step = 0;             // the step the evaluation follows
  bool compressed = true;       // the pass through the links' codecs, or the one around them
  int64_t done = 0, total = 0;  // batches
};

using Telemetry = std::variant<StepRecord, EvalRecord, HistogramRecord, EventRecord, StatusRecord, ProgressRecord>;

}  // namespace ps
