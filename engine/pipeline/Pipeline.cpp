#include "engine/pipeline/Pipeline.h"

#include <torch/torch.h>

#include <algorithm>

namespace ps {

Pipeline::Pipeline(BlockModel model, PipelineOptions options)
    : model_(std::move(model)), options_(std::move(options)), schedule_(makeSchedule(options_.schedule)) {
  const int stages = int(options_.starts.size());
  for (int b = 0; b + 1 < stages; ++b) {
    Link::Settings settings;
    if (b < int(options_.forward.size())) settings.forward = options_.forward[size_t(b)];
    if (b < int(options_.backward.size())) settings.backward = options_.backward[size_t(b)];
    settings.context.seed = options_.seed;
    settings.aqsgd = options_.aqsgd;
    links_.push_back(std::make_unique<Link>(b, options_.link, settings));
  }
  for (int s = 0; s < stages; ++s) {
    const size_t first = options_.starts[size_t(s)];
    const size_t last = s + 1 < stages ? options_.starts[size_t(s) + 1] : model_.size();
    auto device = s < int(options_.devices.size()) ? options_.devices[size_t(s)] : torch::Device(torch::kCPU);
    workers_.push_back(std::make_unique<StageWorker>(s, stages, std::make_shared<StageModule>(model_, first, last),
                                                     device, options_.optimizer, options_.threads_per_stage));
  }
  for (int s = 0; s < stages; ++s)
    workers_[size_t(s)]->connect(s > 0 ? links_[size_t(s) - 1].get() : nullptr,
                                 s + 1 < stages ? links_[size_t(s)].get() : nullptr);
}

Pipeline::~Pipeline() {
  for (auto& l : links_) l->abort();
  workers_.clear();  // joins the threads before the links go
}

StepResult Pipeline::step(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                          const torch::Tensor& samples, int64_t epoch) {
  const int m = std::min<int>(options_.microbatches, int(x.size(0)));
  auto work = std::make_shared<StepWork>();
  work->kind = model_.kind;
  work->inputs = x.tensor_split(m);
  work->targets = y.tensor_split(m);
  for (const auto& part : work->inputs) work->scales.push_back(double(part.size(0)) / double(x.size(0)));
  work->histogram_bins = histogramBins;
  work->step = step;
  work->epoch = epoch;
  if (samples.defined())
    for (const auto& part : samples.tensor_split(m)) {
      auto ids = part.contiguous();
      work->samples.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
    }

  for (auto& l : links_) l->armHistograms(histogramBins, step);
  std::vector<std::future<StageStepResult>> futures;
  for (int s = 0; s < stages(); ++s)
    futures.push_back(workers_[size_t(s)]->trainStep(schedule_->ops(s, stages(), m), work));

  // Collect every stage; if one fails, abort the links so the others stop waiting, then report the first error.
  std::vector<StageStepResult> results(futures.size());
  std::exception_ptr failure;
  for (size_t s = 0; s < futures.size(); ++s) {
    try {
      results[s] = futures[s].get();
    } catch (const PipelineAborted&) {
    } catch (...) {
      if (!failure) failure = std::current_exception();
      for (auto& l : links_) l->abort();
    }
  }
  if (failure) {
    for (auto& l : links_) {  // drop what the abandoned step left behind
      l->reset();
      l->takeHistograms();
      for (Direction d : {Direction::Forward, Direction::Backward}) l->takeTraffic(d);
    }
    std::rethrow_exception(failure);
  }

  StepResult r;
  r.loss = results.back().loss;
  r.correct = results.back().correct;
  r.predictions = results.back().predictions;
  for (auto& s : results) {
    r.compute_s += s.compute_s;
    r.emulated_s = std::max(r.emulated_s, s.clock);
    if (s.gradients) r.histograms.push_back(std::move(*s.gradients));
  }
  for (auto& l : links_) {
    for (Direction d : {Direction::Forward, Direction::Backward}) r.traffic.push_back(l->takeTraffic(d));
    for (auto& h : l->takeHistograms()) r.histograms.push_back(std::move(h));
  }
  return r;
}

EvalResult Pipeline::evaluate(const torch::Tensor& x, const torch::Tensor& y, bool compressed) {
  torch::NoGradGuard noGrad;
  torch::Tensor h = x;
  for (int s = 0; s < stages(); ++s) {
    auto& w = *workers_[size_t(s)];
    h = w.module().forward(h.to(w.device()));
    if (compressed && s + 1 < stages()) h = links_[size_t(s)]->roundTrip(Direction::Forward, h);
  }
  auto target = y.to(h.device());
  EvalResult r;
  r.samples = x.size(0);
  r.loss_sum = lossOf(model_.kind, h, target).item<double>() * double(r.samples);
  r.correct = correctOf(model_.kind, h, target);
  r.predictions = target.numel();
  return r;
}

void Pipeline::setLearningRate(double lr) {
  for (auto& w : workers_) w->setLearningRate(lr);
}

std::vector<std::pair<std::string, torch::Tensor>> Pipeline::namedParameters() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& w : workers_)
    for (const auto& item : w->module().named_parameters()) out.emplace_back(item.key(), item.value());
  return out;
}

}  // namespace ps
