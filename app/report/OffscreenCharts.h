#pragma once
// For programs without a GUI (the CLI): writes a suite's report with its charts drawn by the app's chart adapter
// under an offscreen QApplication of its own. The header has no Qt in it, so the caller's code stays Qt-free.
#include "engine/suites/SuiteResults.h"

#include <string>
#include <vector>

namespace ps::report {

// report::writeReport (ReportCharts.h) with an offscreen QApplication around it when the process has none.
std::string writeReportOffscreen(const SuiteResults& results, const std::string& dir, std::vector<bool>* drawn);

}  // namespace ps::report
