#include "engine/tensors/Histogram.h"

#include <torch/torch.h>

namespace ps {

HistogramRecord histogramOf(const std::vector<torch::Tensor>& tensors, int bins, std::string name, int64_t step) {
  HistogramRecord h;
  h.step = step;
  h.name = std::move(name);
  std::vector<torch::Tensor> flat;
  for (const auto& t : tensors)
    if (t.defined() && t.numel() > 0) flat.push_back(t.detach().reshape({-1}).to(torch::kCPU, torch::kFloat32));
  h.counts.assign(size_t(bins), 0.f);
  if (flat.empty()) return h;
  auto all = flat.size() == 1 ? flat[0] : torch::cat(flat);
  all = all.masked_select(torch::isfinite(all));
  if (all.numel() == 0) return h;
  h.lo = all.min().item<double>();
  h.hi = all.max().item<double>();
  if (h.hi <= h.lo) h.hi = h.lo + 1e-12;
  auto counts = torch::histc(all, bins, h.lo, h.hi).contiguous();
  std::copy(counts.data_ptr<float>(), counts.data_ptr<float>() + bins, h.counts.begin());
  return h;
}

}  // namespace ps
