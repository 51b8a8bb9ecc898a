#pragma once
// A suite's report: report.md and a self-contained report.html (charts embedded) in one folder, with the verdict of
// every rule (what the paper says, what we measured as mean ± std over seeds, the verdict and the runs behind it),
// a table of the variants, and the charts. The charts are described here and drawn by the caller (the app's chart
// adapter, offscreen), so this part needs no GUI library.
#include "engine/suites/SuiteResults.h"

#include <string>
#include <vector>

namespace ps {

struct ReportSeries {
  std::string label;
  int color = 0;  // the variant's index: the same colour in every chart
  std::vector<std::pair<double, double>> points;
};

struct ReportChart {
  enum class Kind { Lines, Scatter, Bars };
  std::string file;  // file name inside the report's charts/ folder
  std::string title, x_label, y_label;
  Kind kind = Kind::Lines;
  std::vector<ReportSeries> series;
  std::vector<std::string> categories;  // Bars: the label of x = 0, 1, ...
  std::string note;                     // shown under the chart (what is missing from it, and why)
};

// Accuracy (or the suite's curve metric) over steps per variant, the final value against wire bytes per run, and the
// emulated time to the target per variant.
std::vector<ReportChart> suiteCharts(const SuiteResults& results);

// Writes report.md and report.html into `dir` (created). `drawn`: the charts whose PNG is at dir/charts/<file>;
// the others are listed as not drawn, with `whyNotDrawn`. Returns the path of report.html.
std::string writeSuiteReport(const SuiteResults& results, const std::vector<ReportChart>& charts,
                             const std::vector<bool>& drawn, const std::string& whyNotDrawn, const std::string& dir);

}  // namespace ps
