#pragma once
// The metrics a step and an evaluation are recorded as: the keys of engine/core/Metrics.h with their values. The run
// store's sink writes them, the live charts read them, so a live chart and a stored run show the same points.
#include "engine/core/Metrics.h"
#include "engine/core/Telemetry.h"

#include <vector>

namespace ps {

// Appends the step's metrics (training loss and rate, times, and every link's traffic and error) to `out`.
void stepMetrics(const StepRecord& step, std::vector<MetricPoint>& out);
// Appends an evaluation's loss and accuracy or perplexity (the uncompressed evaluation's keys carry the suffix).
void evalMetrics(const EvalRecord& eval, std::vector<MetricPoint>& out);

}  // namespace ps
