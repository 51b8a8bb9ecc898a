#pragma once
#include "engine/core/Telemetry.h"

#include <torch/types.h>

#include <vector>

namespace ps {
// Histogram of every value in `tensors` over [min, max] with `bins` equal bins.
HistogramRecord histogramOf(const std::vector<torch::Tensor>& tensors, int bins, std::string name, int64_t step);
}  // namespace ps
