#include "engine/pipeline/Schedule.h"

#include <algorithm>
#include <stdexcept>

namespace ps {

std::vector<PipelineOp> GPipeSchedule::ops(int, int, int microbatches) const {
  std::vector<PipelineOp> out;
  for (int m = 0; m < microbatches; ++m) out.push_back({PipelineOp::Forward, m});
  for (int m = 0; m < microbatches; ++m) out.push_back({PipelineOp::Backward, m});
  return out;
}

std::vector<PipelineOp> OneFOneBSchedule::ops(int stage, int stages, int microbatches) const {
  std::vector<PipelineOp> out;
  const int warmup = std::min(stages - stage - 1, microbatches);
  int forward = 0, backward = 0;
  for (; forward < warmup; ++forward) out.push_back({PipelineOp::Forward, forward});
  while (forward < microbatches) {
    out.push_back({PipelineOp::Forward, forward++});
    out.push_back({PipelineOp::Backward, backward++});
  }
  while (backward < microbatches) out.push_back({PipelineOp::Backward, backward++});
  return out;
}

std::unique_ptr<Schedule> makeSchedule(const std::string& name) {
  if (name == "gpipe") return std::make_unique<GPipeSchedule>();
  if (name == "1f1b") return std::make_unique<OneFOneBSchedule>();
  throw std::invalid_argument("unknown pipeline schedule '" + name + "': choose gpipe or 1f1b");
}

int reuseDistance(const std::vector<PipelineOp>& ops) {
  int count = 0;
  for (const PipelineOp& op : ops) count = std::max(count, op.microbatch + 1);
  // Where each micro-batch's forward and backward are (a micro-batch with no backward holds on to the end).
  std::vector<size_t> forwardAt(size_t(count), ops.size()), backwardAt(size_t(count), ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    (ops[i].kind == PipelineOp::Forward ? forwardAt : backwardAt)[size_t(ops[i].microbatch)] = i;
  for (int d = 1; d < count; ++d) {
    bool apart = true;
    for (int m = 0; apart && m + d < count; ++m) apart = backwardAt[size_t(m)] < forwardAt[size_t(m + d)];
    if (apart) return d;
  }
  return count;
}

}  // namespace ps
