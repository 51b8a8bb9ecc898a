#pragma once
// One pipeline stage on its own thread: owns its blocks, optimizer and device, and runs the schedule's
// forward and backward passes, exchanging tensors with its neighbours through links.
#include "engine/models/BlockModel.h"
#include "engine/models/StageModule.h"
#include "engine/pipeline/Link.h"
#include "engine/pipeline/Schedule.h"
#include "engine/pipeline/StageGraphs.h"
#include "engine/pipeline/StageStream.h"

#include <torch/optim/optimizer.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

namespace ps {

struct OptimizerOptions {
  std::string name = "adam";
  double lr = 1e-3, momentum = 0.9, weight_decay = 0;
};

// An activation's shape at a boundary: a micro-batch's rows, then one sample's shape there.
inline std::vector<int64_t> activationShape(int64_t rows, const std::vector<int64_t>& sample) {
  std::vector<int64_t> shape{rows};
  shape.insert(shape.end(), sample.begin(), sample.end());
  return shape;
}

// Inputs of one training step, shared read-only by every stage.
struct StepWork {
  TaskKind kind = TaskKind::Classifier;
  std::vector<torch::Tensor> inputs, targets;  // per micro-batch (stage 0 reads inputs, the last stage targets)
  std::vector<double> scales;                  // micro-batch size / batch size
  std::vector<std::vector<int64_t>> samples;   // per micro-batch: sample ids (may be empty)
  // Per boundary: one sample's activation shape there. A stage expects [micro-batch rows] + this from its
  // previous stage, and refuses any other shape before decoding (bytes from another process are untrusted).
  std::vector<std::vector<int64_t>> boundary_samples;
  bool pinned = false;  // inputs and targets are in page-locked host memory: copies to a GPU need not wait
  int histogram_bins = 0;                      // > 0: report a gradient histogram this step
  int64_t step = 0, epoch = 0;

  // What a stage receives forward at `boundary` for a micro-batch: its rows, then one sample's shape there; empty
  // when unknown.
  std::vector<int64_t> activationShape(int boundary, int microbatch) const {
    if (size_t(boundary) >= boundary_samples.size() || size_t(microbatch) >= inputs.size()) return {};
    return ps::activationShape(inputs[size_t(microbatch)].size(0), boundary_samples[size_t(boundary)]);
  }
  MessageMeta meta(int microbatch) const {
    MessageMeta m;
    m.slot = microbatch;
    m.samples = size_t(microbatch) < samples.size() ? &samples[size_t(microbatch)] : nullptr;
    m.epoch = epoch;
    return m;
  }
};

struct StageStepResult {
  double compute_s = 0;  // forward + backward + optimizer
  double clock = 0;      // the stage's emulated time at the end of the step
  double loss = 0;                               // last stage: batch mean loss
  int64_t correct = 0, predictions = 0;
  std::optional<HistogramRecord> gradients;
  TraceLane trace;  // what the clock was made of (engine/core/StepTrace.h)
  TraceClock::time_point began{};  // when the stage began the step: its trace's wall times count from here
};

// How a stage uses CUDA streams (engine/pipeline/StageStream.h): `own`, a stream of its own on a GPU (pipeline.
// stage_streams); `check`, the discipline's check mode (pipeline.stream_check); `graphs`, whether its passes are
// replayed from CUDA graphs (pipeline.cuda_graphs, engine/pipeline/StageGraphs.h).
struct StreamOptions {
  bool own = true, check = false;
  GraphMode graphs = GraphMode::Off;
};

class StageWorker {
 public:
  StageWorker(int index, int stages, std::shared_ptr<StageModule> module, torch::Device device,
              const OptimizerOptions& optimizer, int threads, StreamOptions streams = {});
  ~StageWorker();
  StageWorker(const StageWorker&) = delete;
  StageWorker& operator=(const StageWorker&) = delete;

  void connect(Link* previous, Link* next) { previous_ = previous, next_ = next; }
  std::future<StageStepResult> trainStep(std::vector<PipelineOp> ops, std::shared_ptr<const StepWork> work);
  void setLearningRate(double lr);  // between steps only
  // Between steps only: drops what the optimizer keeps for `parameter` (Adam's moments, SGD's momentum), as after the
  // parameter was given a new shape and start.
  void forgetOptimizerState(const torch::Tensor& parameter);
  // Runs on the stage thread after the step's backward passes and before the optimizer (the data-parallel
  // gradient exchange). Set before the first step.
  void setBeforeUpdate(std::function<void(StageStepResult&)> hook) { beforeUpdate_ = std::move(hook); }
  // The decoder of the learned bottleneck this stage's output feeds (the next stage's own in one process, this
  // process's copy of it across processes), with which each forward message's reconstruction error is measured on
  // the side; null: none is measured. Set between steps.
  void measureReconstructionWith(CodeProjection decoder) { decoder_ = std::move(decoder); }
  // The last stage's loss and hits stay on its device and are read once, after the step's passes, instead of after
  // each micro-batch (a GPU then waits for the device once a step). Set between steps.
  void deferReads(bool on) { deferReads_ = on; }
  StageModule& module() { return *module_; }
  const torch::Device& device() const { return device_; }
  const StageStream& stream() const { return stream_; }
  // Read between steps only.
  const StageGraphs& graphs() const { return *graphs_; }

 private:
  struct InFlight;
  StageStepResult runStep(const std::vector<PipelineOp>& ops, const StepWork& work);
  void forward(int microbatch, const StepWork& work, InFlight& f, StageStepResult& r);
  void backward(int microbatch, const StepWork& work, InFlight& f, StageStepResult& r);
  void update(const StepWork& work, StageStepResult& r);
  void measureReconstruction(const torch::Tensor& code);
  void post(std::function<void()> task);
  void loop(int threads);

  // Runs `call` (a link's send or receive, the gradient exchange) and stamps the trace events it appended with where
  // they began on the wall clock; returns what the call returns.
  template <typename Call>
  auto stamped(std::vector<TraceEvent>& events, Call&& call);
  // Seconds since this step began on the stage's wall clock (at `t`, or now): where its trace events began.
  double sinceStep(TraceClock::time_point t = TraceClock::now()) const {
    return std::chrono::duration<double>(t - stepStart_).count();
  }

  int index_, stages_;
  TraceClock::time_point stepStart_;
  std::shared_ptr<StageModule> module_;
  torch::Device device_;
  StageStream stream_;
  std::unique_ptr<StageGraphs> graphs_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  Link* previous_ = nullptr;
  Link* next_ = nullptr;
  std::function<void(StageStepResult&)> beforeUpdate_;
  CodeProjection decoder_{nullptr};
  bool deferReads_ = false;
  torch::Tensor lossSum_, hitSum_;  // deferred reads: the step's so far, float64 on the stage's device

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ps
