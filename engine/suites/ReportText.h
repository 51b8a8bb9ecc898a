#pragma once
// How a suite's report writes its numbers and escapes its text: a metric's value, a mean ± spread over seeds, a
// rule's margin, and text made safe for an HTML page or a Markdown table cell.
#include "engine/suites/SuiteMetrics.h"
#include "engine/suites/Verdict.h"

#include <string>

namespace ps::report {

std::string format(const char* fmt, double v);  // printf of one number

// `digits` significant digits with their trailing zeros ("2.00", "0.40": the digits say how close a margin is),
// without printf's bare point ("17", not "17.") or its exponent for numbers with more digits than that ("338").
std::string significant(double v, int digits, bool sign);

// A byte count in the unit that suits it: "6.88 GB", "40 kB".
std::string bytesText(double bytes, int digits);

// The metric's description; an unknown name gets a plain one (no unit, higher is better).
const SuiteMetricInfo& infoOf(const std::string& metric);

std::string valueText(const SuiteMetricInfo& m, double v);          // "91.74%", "6.27 GB", "175.4 s", "not reached"
std::string statText(const SuiteMetricInfo& m, const Statistic& s);   // "91.74 ± 0.15%", "6.27 GB ± 180 MB"
std::string marginText(const SuiteMetricInfo& m, const Statistic& s);  // "+39.7 ± 7.1 s", "-1.47 ± 0.19 points"
std::string intervalText(const SuiteMetricInfo& m, double low, double high);  // "[+0.12, +1.80] points"; "–" for NaN
std::string pValueText(double p);                                            // "0.053", "0.0042", "< 0.001", "–"

std::string html(const std::string& s);  // escaped for HTML text and attribute values
std::string cell(const std::string& s);  // a Markdown table cell: '|' escaped, line breaks made spaces

}  // namespace ps::report
