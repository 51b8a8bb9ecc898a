#include "engine/suites/ReportText.h"

#include <cmath>
#include <cstdio>

namespace ps::report {
namespace {

// The spread of a mean: two significant digits, or the mean's own decimals where it has fixed ones.
std::string spreadText(const SuiteMetricInfo& m, double sd) {
  if (m.percent) return format("%.2f%%", 100 * sd);
  if (m.unit == "s") return format("%.1f s", sd);
  if (m.unit == "B") return bytesText(sd, 2);
  return significant(sd, 2, false) + (m.unit.empty() ? "" : " " + m.unit);
}

}  // namespace

std::string format(const char* fmt, double v) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, v);
  return text;
}

const SuiteMetricInfo& infoOf(const std::string& metric) {
  static const SuiteMetricInfo plain{"", "", "", true, false};
  const SuiteMetricInfo* info = findSuiteMetric(metric);
  return info ? *info : plain;
}

std::string significant(double v, int digits, bool sign) {
  if (std::abs(v) >= std::pow(10.0, digits) - 0.5) return format(sign ? "%+.0f" : "%.0f", v);
  char text[64];
  std::snprintf(text, sizeof text, sign ? "%#+.*g" : "%#.*g", digits, v);
  std::string t = text;
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

std::string bytesText(double bytes, int digits) {
  const double a = std::abs(bytes);
  if (a >= 1e9) return significant(bytes / 1e9, digits, false) + " GB";
  if (a >= 1e6) return significant(bytes / 1e6, digits, false) + " MB";
  return significant(bytes / 1e3, digits, false) + " kB";
}

std::string valueText(const SuiteMetricInfo& m, double v) {
  if (std::isinf(v)) return "not reached";
  if (std::isnan(v)) return "n/a";
  if (m.percent) return format("%.2f%%", 100 * v);
  if (m.unit == "B") return bytesText(v, 3);
  if (m.unit == "s") return format("%.1f s", v);
  if (m.unit == "ms") return significant(v, 3, false) + " ms";
  return format("%.4g", v);
}

std::string statText(const SuiteMetricInfo& m, const Statistic& s) {
  if (s.count == 0) return "n/a";
  if (s.count == 1 || !std::isfinite(s.mean)) return valueText(m, s.mean);
  if (m.percent) return format("%.2f", 100 * s.mean) + " ± " + spreadText(m, s.sd);
  return valueText(m, s.mean) + " ± " + spreadText(m, s.sd);
}

namespace {

// A margin is written in points for percentages and MB for bytes.
double marginScale(const SuiteMetricInfo& m) { return m.percent ? 100 : m.unit == "B" ? 1e-6 : 1; }
std::string marginUnit(const SuiteMetricInfo& m) {
  return m.percent ? " points" : m.unit == "B" ? " MB" : m.unit.empty() ? "" : " " + m.unit;
}

}  // namespace

std::string marginText(const SuiteMetricInfo& m, const Statistic& s) {
  if (s.count == 0) return "n/a";
  if (!std::isfinite(s.mean)) return s.mean > 0 ? "+inf" : "-inf";
  std::string t = significant(marginScale(m) * s.mean, 3, true);
  if (s.count > 1) t += " ± " + significant(marginScale(m) * s.sd, 2, false);
  return t + marginUnit(m);
}

std::string intervalText(const SuiteMetricInfo& m, double low, double high) {
  if (std::isnan(low) || std::isnan(high)) return "–";
  return "[" + significant(marginScale(m) * low, 3, true) + ", " + significant(marginScale(m) * high, 3, true) + "]" +
         marginUnit(m);
}

std::string pValueText(double p) {
  if (std::isnan(p)) return "–";
  if (p < 0.001) return "< 0.001";
  return format(p < 0.01 ? "%.4f" : "%.3f", p);
}

std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace ps::report
