#include "engine/pipeline/Pipeline.h"

#include <torch/torch.h>

#include <algorithm>

// What a step hands its stages: the micro-batches (pinned for a GPU stage), their shares of the batch and the samples
// they hold, and per boundary the shape of one sample's activation there.

namespace ps {

std::shared_ptr<StepWork> Pipeline::makeWork(const torch::Tensor& x, const torch::Tensor& y, int64_t step,
                                             int histogramBins, const torch::Tensor& samples, int64_t epoch) {
  const int m = std::max(1, std::min<int>(options_.microbatches, int(x.size(0))));
  auto work = std::make_shared<StepWork>();
  work->kind = model_.kind;
  // For a GPU stage the batch goes to page-locked memory, from where its copies to the device run beside the host.
  bool gpu = false;
  for (const auto& w : workers_) gpu = gpu || (w && w->device().is_cuda());
  work->pinned = gpu && x.is_cpu() && y.is_cpu();
  work->inputs = (work->pinned ? x.pin_memory() : x).tensor_split(m);
  work->targets = (work->pinned ? y.pin_memory() : y).tensor_split(m);
  for (const auto& part : work->inputs) work->scales.push_back(double(part.size(0)) / double(x.size(0)));
  if (stages() > 1 && x.size(0) > 0) work->boundary_samples = boundarySamples(x);
  work->histogram_bins = histogramBins;
  work->step = step;
  work->epoch = epoch;
  if (samples.defined())
    for (const auto& part : samples.tensor_split(m)) {
      auto ids = part.contiguous();
      work->samples.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
    }
  return work;
}

const std::vector<std::vector<int64_t>>& Pipeline::boundarySamples(const torch::Tensor& x) {
  auto input = x.sizes().vec();
  input.erase(input.begin());
  if (input == boundaryInput_ && !boundarySamples_.empty()) return boundarySamples_;
  // Between steps, while no stage thread runs: one sample through every block in evaluation mode (nothing learns,
  // no running statistics move), each block on its own device.
  torch::NoGradGuard noGrad;
  boundarySamples_.clear();
  torch::Tensor h = x.narrow(0, 0, 1);
  const auto project = [&](CodeProjection p) { h = p->forward(h.to(p->weight().device())); };
  for (int s = 0; s + 1 < stages(); ++s) {
    const size_t first = options_.starts[size_t(s)], last = options_.starts[size_t(s) + 1];
    if (auto in = bottleneck(s - 1)) project(in->decoder);
    for (size_t b = first; b < last; ++b) {
      auto module = model_.blocks[b].ptr();
      const bool training = module->is_training();
      const auto params = module->parameters();
      if (!params.empty()) h = h.to(params.front().device());
      module->eval();
      h = model_.blocks[b].forward(h);
      module->train(training);
    }
    if (auto out = bottleneck(s)) project(out->encoder);
    auto shape = h.sizes().vec();
    shape.erase(shape.begin());
    boundarySamples_.push_back(std::move(shape));
  }
  boundaryInput_ = std::move(input);
  return boundarySamples_;
}

}  // namespace ps
