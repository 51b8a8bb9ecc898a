#pragma once
// A saved run's step timelines (engine/core/Timeline.h), read from its stored step traces: one step's, as recorded
// and for another network or codec (what if), as JSON; and a range of steps as a Chrome/Perfetto trace-event file.
#include "engine/core/Timeline.h"
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>

namespace ps {

// One saved step's timeline as recorded, and under another network or codec where one is asked for.
struct StepTimelines {
  int64_t run_id = 0, step = 0, steps = 0;  // `steps`: how many steps the run saved
  Timeline recorded;
  std::optional<Timeline> what_if;
  // The network and codec the what-if is for (empty: none asked for).
  RetimeNetwork network;
  CodecScale codec;
  std::optional<int64_t> codec_run, codec_step;  // the run and step whose codec the what-if took, if any
};

// The saved step `step` (default: the last one) of a run. Throws TraceError naming the run and step when the run has
// no traces, the step was not saved (naming the steps that were) or its trace is damaged; StoreError for an unknown
// run; TraceError for a scale that is not a positive finite number.
// `codecFrom`: a run of the same store whose codec the what-if takes instead (engine/core/Timeline.h withCodecOf),
// as it ran at the same step number, or at its last saved step when it saved no such step.
StepTimelines stepTimelines(const RunStore& store, int64_t runId, std::optional<int64_t> step,
                            const RetimeNetwork& network, const CodecScale& codec,
                            std::optional<int64_t> codecFrom = std::nullopt);

// The saved step of another run whose codec a what-if takes for `step`: the same step number where it saved one, else
// its last saved step. TraceError when it saved none.
const TraceRow& codecStepFor(const std::vector<TraceRow>& other, int64_t step);

// Everything about a timeline a reader needs: its step time, bubble, critical path and link costs, and (with
// `bars`) every bar and message.
nlohmann::json timelineJson(const Timeline& t, bool bars);

// The Chrome trace-event format (Perfetto's UI and chrome://tracing read it): one process per lane ("stage 2" or
// "stage 2 replica 1") with threads for its compute, codec and waits, one process for the network with a thread per
// link direction, a flow per message from the sender's encode over the wire to the receiver's decode, and a counter
// of bytes in flight per link direction. Steps are laid out on the emulated clock where they ran (under the network
// asked for); times in microseconds.
struct TraceExport {
  std::optional<int64_t> first, last;  // the steps to write (inclusive); unset: sampled
  size_t sampled = 12;                 // without a range: this many steps, spread evenly over the run
  RetimeNetwork network;
  CodecScale codec;
  // Where the steps ran on the wall clock instead (every lane on one clock, from when the step's first stage began
  // it; waits are the gaps between slices; the network and codec what-if do not apply). TraceError for traces saved
  // before wall times were kept.
  bool wall = false;
};
// Writes the file's JSON to `out`; returns how many steps it holds.
size_t writeChromeTrace(const RunStore& store, int64_t runId, const TraceExport& options, std::ostream& out);
// The same over traces already read (the app keeps a run's).
size_t writeChromeTrace(int64_t runId, const std::vector<TraceRow>& traces, const TraceExport& options,
                        std::ostream& out);

}  // namespace ps
