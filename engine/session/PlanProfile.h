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
  StepTrace step;  // the median profiled step (medianStep(), the first left out): every stage's events, as float32
  std::map<LinkDirection, std::vector<torch::Tensor>> tensors;  // per link direction, that step's first messages
  int threads_per_stage = 1;  // the intra-op threads each stage worker ran with: what its codecs compute on
  int64_t steps_per_epoch = 1;  // of the configuration's training data and batch
};

// `config` with nothing compressed on any link direction: what the planner profiles. Built from config.json, the
// settings the configuration was made from (a field changed without it is not kept).
Config withoutCompression(const Config& config);

// Trains `config` for `steps` steps in this process, as one replica (its compression, link model, schedule, balance
// and threads as configured), and keeps the median step's trace (of the steps after the first, which warms up) and
// the first `samples` messages of every link direction in the last step (the tensors before compression), as float32
// on the CPU. Throws ConfigError for a run that
// cannot be built, std::invalid_argument for steps or samples below 1.
LinkProfile profileLinks(Config config, int steps, int samples);

// What a setting's messages cost where a run pays them: `config` with `forward` on every boundary's activations and
// `backward` on every boundary's gradients (per-boundary settings dropped), trained for `steps` steps as
// profileLinks() trains, and its median step's mean encode and decode seconds and wire bytes per link direction.
// A codec measured alone on a few messages runs on warm caches and an idle core; between the passes of a run its
// encode took twice and its decode five times as long here, enough to move a step by 5-8% at 100 Mbit/s, so the
// planner's times come from here and measureCandidate() gives the error. Throws as profileLinks() does, and
// ConfigError for settings the catalogue refuses.
std::map<LinkDirection, MessageCost> measureSetting(const Config& config, const CompressionOptions& forward,
                                                    const CompressionOptions& backward, int steps);

struct CandidateMeasure {
  MessageCost cost;           // per message: mean encode and decode seconds and bytes on the wire
  double relative_error = 0;  // ||what the receiver used - x|| / ||x|| over the last round's messages
};

// AQ-SGD on every boundary's activations (`forward`, with AQ-SGD feedback), measured where it can be: in a run. It
// keeps each training sample's last activations and sends a sample's change since then from its second visit on,
// so the run trains on two batches over and over with no uncompressed epoch first (from the third step every sample
// has been seen; the steps before are left out), `steps` steps in all. Per forward link direction: the median kept
// step's mean message cost, and the relative error of what the receiver used over the kept steps. That error is a
// floor: here a sample comes back two steps later, in training an epoch later, its activations moved much further,
// so the planner takes AQ-SGD on run evidence only. Throws std::invalid_argument for fewer than 4 steps or options
// without AQ-SGD, and as profileLinks() does.
std::map<LinkDirection, CandidateMeasure> measureAqsgd(const Config& config, const CompressionOptions& forward,
                                                       int steps);

// `options` on one link direction's tensors, through a link of its own as a run sends them (its compensation state
// included) and on the intra-op threads a stage worker has (`threads`, LinkProfile::threads_per_stage; the calling
// thread's own count is restored after): the tensors are sent in order `rounds` times; the first round warms the
// state and the caches up and the figures are the other rounds'. Throws ConfigError for options the catalogue
// refuses, std::invalid_argument for fewer than 2 rounds or 1 thread, no tensors, or AQ-SGD (its buffers are per
// training sample: measured over training steps, not here).
CandidateMeasure measureCandidate(const CompressionOptions& options, const LinkDirection& direction,
                                  const std::vector<torch::Tensor>& tensors, int threads, int rounds = 3);

}  // namespace ps
