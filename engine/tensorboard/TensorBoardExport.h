#pragma once
// Saved runs as TensorBoard event files, so they open next to people's other experiments: per run, every scalar
// metric at its step and wall time (the run's start plus its wall_s, as `runs export --csv` has them; emulated time
// as the scalar `emulated_s`), the histograms as TensorBoard histograms, the run's config and its timeline events
// (settings changed mid-run, resets, GraVAC decisions) as text. Values are those of the CSV export: the last value of
// a key at a step, wall and emulated time the largest at that step. Torch-free.
#include "engine/runs/store/RunStore.h"

#include <stdexcept>
#include <string>

namespace ps::tensorboard {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether this build writes event files (it needs protobuf at build time).
bool available();

// Writes run `runId` of `store` under `dir`: dir/run-<ID>-<name>/events.out.tfevents.<start>.pipesqueeze.<ID>, one
// folder per run as TensorBoard names runs after folders (a previous export of the run is replaced). Returns the
// file's path. Throws ExportError naming the run or the folder and what to do.
std::string exportRun(const RunStore& store, int64_t runId, const std::string& dir);

// The seconds since the Unix epoch of the store's UTC timestamps ("2026-11-26T09:30:00.250Z"); NaN if malformed.
double epochSeconds(const std::string& iso8601);

}  // namespace ps::tensorboard
