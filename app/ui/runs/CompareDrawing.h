#pragma once
// How the compare view puts runs on one of its charts (the chart set is CompareCharts.h's): a line per run, smoothed
// with the raw line faint behind where the series is dense; runs that differ only in seed as one mean line over their
// min-max band; each run's mid-run changes as markers; on the Pareto chart each run's path and final point. Every run
// keeps its colour (runColor) everywhere.
//
// Series ids: "run<ID>" (the drawn line; smoothed when smoothing is on), "run<ID>/raw" (the faint raw line, only while
// smoothing), "group<first run's ID>" with "/lo" and "/hi" for a seed group, and on the Pareto chart "run<ID>" (the
// final point) and "run<ID>/curve".
#include "app/ui/runs/CompareCharts.h"
#include "app/ui/runs/RunNames.h"
#include "app/ui/runs/RunSeries.h"

#include <QString>

#include <vector>

namespace ps::ui {

class PlotWidget;

// What the view's controls choose for every chart.
struct CompareOptions {
  XAxis axis = XAxis::Step;
  double smoothing = 0.6;  // debiased-EMA weight, 0 .. 0.99
  bool logY = false;
  bool ignoreOutliers = true;  // y scaled to the bulk of dense series, what is left out marked at the edge
  bool groupSeeds = false;  // runs that differ only in seed as one band
};

// Replaces what `plot` shows with `runs` (the visible ones, in order) drawn as `chart` asks, each named as in `names`.
void drawCompareChart(PlotWidget& plot, const CompareChart& chart, const std::vector<const RunSeries*>& runs,
                      const CompareOptions& options, const RunNames& names);

}  // namespace ps::ui
