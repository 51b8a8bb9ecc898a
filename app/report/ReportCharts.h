#pragma once
// Draws a suite report's charts (engine/suites/SuiteReport.h) with the app's chart adapter, offscreen, as PNG files:
// the same painter as the live and compare views. Needs a QApplication (the CLI makes an offscreen one).
#include "engine/suites/SuiteReport.h"

#include <QSize>
#include <QString>

#include <vector>

namespace ps::report {

// False when the file cannot be written.
bool drawChart(const ReportChart& chart, const QString& path, QSize size = QSize(960, 540));
// Every chart into dir/charts/<file>; which ones were written.
std::vector<bool> drawCharts(const std::vector<ReportChart>& charts, const std::string& dir);

}  // namespace ps::report
