#pragma once
// The compression planner's measurements on this machine (its search is engine/plan, torch-free): a preset's own
// step and link tensors, profiled with nothing compressed, and any codec setting measured on those tensors.
#include "engine/compress/spec/CompressionOptions.h"
#include "engine/core/Timeline.h"
#include "engine/runs/config/Config.h"

#include <torch/types.h>

#include <map>
#include <vector>

namespace ps {

struct LinkProfile {
  StepTrace step;  // the last profiled step: every stage's events, each message sent as float32
  std::map<LinkDirection, std::vector<torch::Tensor>> tensors;  // per link direction, that step's first messages
};

// `config` with nothing compressed on any link direction: what the planner profiles. Built from config.json, the
// settings the configuration was made from (a field changed without it is not kept).
Config withoutCompression(const Config& config);

// Trains `config` for `steps` steps in this process, as one replica (its compression, link model, schedule, balance
// and threads as configured), and keeps the last step's trace and the first `samples` messages of every link
// direction in that step (the tensors before compression), as float32 on the CPU. Throws ConfigError for a run that
// cannot be built, std::invalid_argument for steps or samples below 1.
LinkProfile profileLinks(Config config, int steps, int samples);

struct CandidateMeasure {
  MessageCost cost;           // per message: mean encode and decode seconds and bytes on the wire
  double relative_error = 0;  // ||what the receiver used - x|| / ||x|| over the last round's messages
};

// `options` on one link direction's tensors, through a link of its own as a run sends them (its compensation state
// included): the tensors are sent in order `rounds` times; the first round warms the state and the caches up and
// the figures are the other rounds'. Throws ConfigError for options the catalogue refuses, std::invalid_argument
// for fewer than 2 rounds, no tensors, or AQ-SGD (its buffers are per training sample: measured over training steps,
// not here).
CandidateMeasure measureCandidate(const CompressionOptions& options, const LinkDirection& direction,
                                  const std::vector<torch::Tensor>& tensors, int rounds = 3);

}  // namespace ps
