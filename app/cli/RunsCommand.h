#pragma once
#include <CLI/App.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ps::cli {

struct RunsOptions {
  std::string store, action, output;
  std::string filter;       // list: the runs filter (engine/runs/store/RunFilter.h)
  std::string tensorboard;  // export: a folder for TensorBoard event files, one per run
  int64_t id = 0;
  std::vector<std::string> values;  // tag, untag: the tags; note: the note's words; export --tensorboard: more ids
  bool csv = false, json = false;
  // retime: the network to re-time the run for; a figure not given keeps the run's own.
  std::optional<double> bandwidth_mbps, latency_ms;
  std::string framing;  // "tcp" or "none"; empty: each step's own
  std::string egress;   // "link" or "stage"; empty: each step's own
  // timeline: the saved step (default: the last); timeline and export --trace: codec time scales (what if).
  std::optional<int64_t> step;
  std::optional<double> encode_scale, decode_scale;
  std::optional<int64_t> codec_from;  // timeline: what if the links had used this run's codec
  std::string trace;  // export: a Chrome/Perfetto trace file to write
  std::string steps;  // export --trace: "A:B", "A:", ":B" or "N" (default: sampled steps)
  std::string clock;  // export --trace: "emulated" (default) or "wall"
  // breakeven: the bandwidths to map (Mbit/s, comma separated) and the target (an accuracy fraction or a perplexity,
  // or a share of the uncompressed run's final value).
  std::string bandwidths;
  std::optional<double> target, target_fraction;
};

// The run ids a command was given: `id` and then every one of `values`. Throws naming a value that is not an id.
std::vector<int64_t> runIds(const RunsOptions& options, const std::string& command);

void addRunsCommand(CLI::App& app, RunsOptions& options);
int runRuns(const RunsOptions& options);

}  // namespace ps::cli
