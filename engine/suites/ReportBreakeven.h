#pragma once
// A suite report's break-even section: a timed suite's first seed re-timed over bandwidths (SuiteResults::breakeven)
// as a table, a row per bandwidth and a column per variant, and a line per compressed variant against an
// uncompressed one; or why there is none. Written as Markdown and HTML by SuiteReport.cpp.
#include "engine/suites/SuiteResults.h"

#include <map>
#include <string>
#include <vector>

namespace ps::report {

struct BreakevenSection {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // the fastest per row wrapped in ** **
  std::vector<std::string> lines;
  std::string note;
};

// `labels`: what each run is called (its variant's label); a run without one is "run N".
BreakevenSection breakevenSection(const SuiteResults& r, const std::map<int64_t, std::string>& labels);

}  // namespace ps::report
