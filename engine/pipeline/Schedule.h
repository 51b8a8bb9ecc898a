#pragma once
// The order in which one stage runs the forward and backward passes of a step's micro-batches.
#include <memory>
#include <string>
#include <vector>

namespace ps {

struct PipelineOp {
  enum Kind { Forward, Backward } kind;
  int microbatch;
  bool operator==(const PipelineOp& o) const { return kind == o.kind && microbatch == o.microbatch; }
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual std::vector<PipelineOp> ops(int stage, int stages, int microbatches) const = 0;
  virtual std::string name() const = 0;
};

// GPipe: every forward, then every backward (activations of all micro-batches live at once).
class GPipeSchedule final : public Schedule {
 public:
  std::vector<PipelineOp> ops(int stage, int stages, int microbatches) const override;
  std::string name() const override { return "gpipe"; }
};

// 1F1B (PipeDream-flush): a warm-up of forwards, then alternate one forward and one backward, then drain.
// At most `stages - stage` micro-batches' activations are alive on a stage.
class OneFOneBSchedule final : public Schedule {
 public:
  std::vector<PipelineOp> ops(int stage, int stages, int microbatches) const override;
  std::string name() const override { return "1f1b"; }
};

std::unique_ptr<Schedule> makeSchedule(const std::string& name);

// The smallest d >= 1 such that in `ops` every micro-batch's backward comes before the forward of the micro-batch d
// after it: what a micro-batch holds from its forward to its backward (a stage's recorded graphs and their memory)
// can then be shared by micro-batches d apart. The number of micro-batches when no smaller d does (GPipe), 0 for no
// ops. 1F1B gives stages - stage on the stage of that index (fewer when there are fewer micro-batches).
int reuseDistance(const std::vector<PipelineOp>& ops);

}  // namespace ps
