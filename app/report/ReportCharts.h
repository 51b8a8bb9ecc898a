#pragma once
// Draws a suite report's charts (engine/suites/SuiteReport.h) with the app's chart adapter, offscreen, as PNG files:
// the same painter as the live and compare views. Needs a QApplication (OffscreenCharts.h makes one for programs
// without a GUI).
#include "engine/suites/SuiteReport.h"

#include <QSize>
#include <QString>

#include <vector>

namespace ps::report {

// False when the file cannot be written.
bool drawChart(const ReportChart& chart, const QString& path, QSize size = QSize(960, 540));
// Every chart into dir/charts/<file>; which ones were written.
std::vector<bool> drawCharts(const std::vector<ReportChart>& charts, const std::string& dir);

// A suite's whole report: its charts drawn and report.md and report.html written into `dir`. Returns the path of
// report.html; `drawn` (optional) gets which charts were drawn.
std::string writeReport(const SuiteResults& results, const std::string& dir, std::vector<bool>* drawn = nullptr);

}  // namespace ps::report
