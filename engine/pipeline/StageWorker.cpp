#include "engine/pipeline/StageWorker.h"
#include "engine/core/Metrics.h"

#include "engine/tensors/DeviceChecks.h"
#include "engine/tensors/Histogram.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <type_traits>

namespace ps {
namespace {

using Clock = TraceClock;

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerOptions& o, std::vector<torch::Tensor> params) {
  if (o.name == "sgd")
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  if (o.name == "adamw")
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
}

// Where the events a call just appended began on the stage's wall clock (`called` and `returned`: seconds since the
// step began): a receive's decode ended as the call returned (it waited before); anything else began when the call
// was made, several events of one call one after another.
void stampWall(std::vector<TraceEvent>& events, size_t from, double called, double returned) {
  double at = called;
  for (size_t i = from; i < events.size(); ++i) {
    TraceEvent& e = events[i];
    const bool receive = e.kind == TraceEvent::ReceiveForward || e.kind == TraceEvent::ReceiveBackward;
    e.wall = std::max(at, receive ? returned - e.seconds : at);
    at = e.wall + e.seconds + e.decode;
  }
}

}  // namespace

template <typename Call>
auto StageWorker::stamped(std::vector<TraceEvent>& events, Call&& call) {
  const size_t before = events.size();
  const double called = sinceStep();
  if constexpr (std::is_void_v<decltype(call())>) {
    call();
    stampWall(events, before, called, sinceStep());
  } else {
    auto out = call();
    stampWall(events, before, called, sinceStep());
    return out;
  }
}

// Saved per micro-batch between its forward and backward pass.
struct StageWorker::InFlight {
  torch::Tensor input, output;
};

StageWorker::StageWorker(int index, int stages, std::shared_ptr<StageModule> module, torch::Device device,
                         const OptimizerOptions& optimizer, int threads, StreamOptions streams)
    : index_(index),
      stages_(stages),
      module_(std::move(module)),
      device_(device),
      stream_(index, device, streams.own, streams.check) {
  module_->to(device_);
  graphs_ = std::make_unique<StageGraphs>(module_, device_, streams.graphs, streams.own);
  optimizer_ = makeOptimizer(optimizer, module_->parameters());
  thread_ = std::thread([this, threads] { loop(threads); });
}

StageWorker::~StageWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StageWorker::loop(int threads) {
  at::set_num_threads(threads);  // per thread under OpenMP: each stage gets its share of the cores
  // Computing on this thread alone, a CPU stage measures its thread's CPU time (engine/core/StepTrace.h).
  TraceStopwatch::measureThreadCpuTime(device_.is_cpu() && threads == 1);
  const StageStream::Scope onStream(stream_);  // everything this thread queues goes on the stage's stream
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void StageWorker::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

std::future<StageStepResult> StageWorker::trainStep(std::vector<PipelineOp> ops, std::shared_ptr<const StepWork> work) {
  auto task = std::make_shared<std::packaged_task<StageStepResult()>>(
      [this, ops = std::move(ops), work = std::move(work)] {
        try {
          return runStep(ops, *work);
        } catch (...) {
          // Wake the neighbours that wait on this stage; their own failure (PipelineAborted) wakes theirs, so a
          // failing stage never leaves another blocked, whichever stage the pipeline collects first.
          if (previous_) previous_->abort();
          if (next_) next_->abort();
          throw;
        }
      });
  auto future = task->get_future();
  post([task] { (*task)(); });
  return future;
}

namespace {

// A pass failed while checks were still unread. A failed one among them is the cause of what followed (a NaN sent on
// makes the next stage's failure), so its error replaces the pass's; otherwise, or when the device cannot even be read,
// the pass's own error stands.
void settleAfterFailure(DeferredChecks& checks) {
  if (!checks.pending()) return;
  torch::Tensor host;
  try {
    host = checks.answers(torch::kCPU);
  } catch (...) {
    return;
  }
  checks.settle(host);
}

// LibTorch keys an optimizer's per-parameter state by the parameter's TensorImpl: as its address printed (1.x) or as
// the address itself (2.x).
template <class State>
void eraseStateOf(State& state, const torch::Tensor& parameter) {
  using Key = typename State::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;
    key << parameter.unsafeGetTensorImpl();
    state.erase(key.str());
  } else {
    state.erase(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace

void StageWorker::forgetOptimizerState(const torch::Tensor& parameter) {
  eraseStateOf(optimizer_->state(), parameter);
}

void StageWorker::setLearningRate(double lr) {
  for (auto& group : optimizer_->param_groups()) {
    if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&group.options())) adam->lr(lr);
    else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&group.options())) adamw->lr(lr);
    else if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) sgd->lr(lr);
  }
}

StageStepResult StageWorker::runStep(const std::vector<PipelineOp>& ops, const StepWork& work) {
  StageStepResult r;
  r.trace.stage = index_;
  stepStart_ = r.began = Clock::now();
  lossSum_ = hitSum_ = torch::Tensor();  // a step that failed may have left its own
  stream_.followDefault();               // after what the main thread did between steps (parameters loaded or re-drawn)
  graphs_->beginStep(reuseDistance(ops));  // micro-batches never in flight together share their recorded graphs
  // Deferred reads: the passes' checks (engine/tensors/DeviceChecks.h) are read with the loss, and the exchange's after
  // it, before the update.
  std::optional<DeferredChecks> checks;
  if (deferReads_) checks.emplace();
  std::vector<InFlight> saved(work.scales.size());
  try {
    for (const auto& op : ops) {
      InFlight& f = saved[size_t(op.microbatch)];
      if (op.kind == PipelineOp::Forward) {
        forward(op.microbatch, work, f, r);
      } else {
        backward(op.microbatch, work, f, r);
        f = InFlight{};
      }
    }
  } catch (...) {
    if (checks) settleAfterFailure(*checks);
    throw;
  }
  std::vector<torch::Tensor> reads;
  if (lossSum_.defined()) reads = {lossSum_.reshape({1}), hitSum_.reshape({1})};
  if (checks && checks->pending()) reads.push_back(checks->answers(device_));
  if (!reads.empty()) {
    const torch::Tensor host = torch::cat(reads).to(torch::kCPU);
    const int64_t figures = lossSum_.defined() ? 2 : 0;
    if (checks) checks->settle(host.narrow(0, figures, host.numel() - figures));  // throws a failed check's error
    if (figures) {
      r.loss += host[0].item<double>();
      r.correct += int64_t(host[1].item<double>());
    }
    lossSum_ = hitSum_ = torch::Tensor();
  }
  if (beforeUpdate_) {  // advances r.clock by the exchange; its time is not compute
    try {
      stamped(r.trace.events, [&] { beforeUpdate_(r); });
    } catch (...) {
      if (checks) settleAfterFailure(*checks);
      throw;
    }
    // The exchange's checks (one per gradient message and end), in one more read; none when it made none. A replica
    // whose check failed has still taken its part in every collective, so its peers are not left waiting.
    if (checks) checks->settle();
  }
  checks.reset();
  update(work, r);
  stream_.synchronize();  // the main thread reads the stage's parameters and figures next
  return r;
}

// Receives the micro-batch's input (or takes it from the batch on the first stage), runs the stage, and sends the
// output on (or, on the last stage, takes the loss and counts what it got right).
void StageWorker::forward(int microbatch, const StepWork& work, InFlight& f, StageStepResult& r) {
  const bool first = index_ == 0, last = index_ == stages_ - 1;
  const size_t mb = size_t(microbatch);
  if (first) {
    f.input = work.inputs[mb].to(device_, work.pinned);
  } else {
    auto meta = work.meta(microbatch);
    const auto expected = work.activationShape(index_ - 1, microbatch);
    if (!expected.empty()) meta.shape = &expected;
    f.input = stamped(r.trace.events, [&] {
      return previous_->receive(Direction::Forward, device_, r.clock, meta, &r.trace.events).requires_grad_(true);
    });
  }
  const auto t0 = Clock::now();
  const TraceStopwatch watch;
  auto out = graphs_->forward(microbatch, f.input);
  if (last) {
    const auto& target = work.targets[mb].to(device_, work.pinned);
    f.output = lossOf(work.kind, out, target) * work.scales[mb];
    torch::Tensor hits = hitsOf(work.kind, out.detach(), target);
    if (deferReads_) {  // summed where they are, in float64 as below, and read once the step's passes are done
      torch::Tensor loss = f.output.detach().to(torch::kDouble);
      hits = hits.to(torch::kDouble);
      if (!lossSum_.defined())
        lossSum_ = loss, hitSum_ = hits;
      else
        lossSum_ = lossSum_ + loss, hitSum_ = hitSum_ + hits;
    } else {
      r.loss += f.output.item<double>();
      r.correct += hits.item<int64_t>();
    }
    r.predictions += target.numel();
  } else {
    f.output = out;
  }
  const double compute = watch.seconds();
  r.compute_s += compute;
  r.clock += compute;
  r.trace.events.push_back({TraceEvent::Compute, compute, 0, 0, TraceEvent::Forward, 0, sinceStep(t0)});
  if (!last) {
    if (decoder_) measureReconstruction(out);  // before the send: the next stage updates its decoder only after it
    r.clock = stamped(r.trace.events, [&] {
      return next_->send(Direction::Forward, out.detach(), r.clock, work.meta(microbatch), &r.trace.events);
    });
  }
}

// A learned bottleneck's error, off the clock and outside autograd: the next stage's decoder applied to the code as the
// link's codec delivers it (its stateless twin, the same format), against the activation the code stands for. The
// decoder is read while the next stage cannot be changing it: it updates only after this stage's last send of the step.
void StageWorker::measureReconstruction(const torch::Tensor& code) {
  torch::NoGradGuard noGrad;
  const torch::Tensor x = module_->beforeCode().detach();
  module_->forgetBeforeCode();
  const torch::Tensor delivered = next_->roundTrip(Direction::Forward, code.detach());
  const torch::Tensor rebuilt = decoder_->forward(delivered.to(decoder_->weight().device())).to(x.device());
  next_->addReconstruction(Direction::Forward, (rebuilt - x).square().sum(), x.square().sum());
}

// Receives the gradient of what this stage sent forward (the same shape), runs the backward pass, and sends the
// gradient of the stage's input back.
void StageWorker::backward(int microbatch, const StepWork& work, InFlight& f, StageStepResult& r) {
  const bool first = index_ == 0, last = index_ == stages_ - 1;
  torch::Tensor grad;
  if (!last) {
    auto meta = work.meta(microbatch);
    const auto expected = f.output.sizes().vec();
    meta.shape = &expected;
    grad = stamped(r.trace.events,
                   [&] { return next_->receive(Direction::Backward, device_, r.clock, meta, &r.trace.events); });
  }
  const auto t0 = Clock::now();
  const TraceStopwatch watch;
  if (last) f.output.backward();
  else torch::autograd::backward({f.output}, {grad});
  const double compute = watch.seconds();
  r.compute_s += compute;
  r.clock += compute;
  r.trace.events.push_back({TraceEvent::Compute, compute, 0, 0, TraceEvent::Backward, 0, sinceStep(t0)});
  if (!first) {
    r.clock = stamped(r.trace.events, [&] {
      return previous_->send(Direction::Backward, f.input.grad(), r.clock, work.meta(microbatch), &r.trace.events);
    });
  }
}

// The optimizer step, with the gradient histogram taken first when this step records one.
void StageWorker::update(const StepWork& work, StageStepResult& r) {
  const auto t0 = Clock::now();
  const TraceStopwatch watch;
  if (work.histogram_bins > 0) {
    std::vector<torch::Tensor> grads;
    for (const auto& p : module_->parameters()) grads.push_back(p.grad());
    r.gradients = histogramOf(grads, work.histogram_bins, metric::gradHistogramName(index_), work.step);
  }
  optimizer_->step();
  optimizer_->zero_grad();
  const double update = watch.seconds();
  r.compute_s += update;
  r.clock += update;
  r.trace.events.push_back({TraceEvent::Compute, update, 0, 0, TraceEvent::Update, 0, sinceStep(t0)});
}

}  // namespace ps
