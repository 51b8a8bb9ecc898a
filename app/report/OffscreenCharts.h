#pragma once
// For programs without a GUI (the CLI): draws a suite report's charts into dir/charts with the app's chart adapter
// under an offscreen QApplication of its own. The header has no Qt in it, so the caller's code stays Qt-free.
#include "engine/suites/SuiteReport.h"

#include <string>
#include <vector>

namespace ps::report {

// Which charts were written; `why` names the problem for any that were not.
std::vector<bool> drawChartsOffscreen(const std::vector<ReportChart>& charts, const std::string& dir, std::string& why);

}  // namespace ps::report
