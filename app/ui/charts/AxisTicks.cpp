#include "app/ui/charts/AxisTicks.h"

#include <algorithm>
#include <cmath>

namespace ps::ui::axis {

namespace {

// Decimals needed to tell multiples of `step` apart (0 for steps >= 1).
int decimalsFor(double step) {
  return std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 9);
}

// "1.50" -> "1.5", "2.0" -> "2", "10" stays.
QString trimZeros(QString s) {
  if (!s.contains(QLatin1Char('.'))) return s;
  while (s.endsWith(QLatin1Char('0'))) s.chop(1);
  if (s.endsWith(QLatin1Char('.'))) s.chop(1);
  return s;
}

// m x 10^e written as "m e e" with `digits` decimals in the mantissa (mantissa renormalised after rounding).
QString scientific(double v, int digits) {
  int e = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  double m = v / std::pow(10.0, e);
  QString ms = QString::number(m, 'f', digits);
  if (std::fabs(ms.toDouble()) >= 10) {  // 9.99 rounded up to 10.0
    ++e;
    ms = QString::number(m / 10, 'f', digits);
  }
  return trimZeros(ms) + QLatin1Char('e') + QString::number(e);
}

struct Unit {
  double factor;
  char suffix;
};
constexpr Unit kUnits[] = {{1e12, 'T'}, {1e9, 'G'}, {1e6, 'M'}, {1e3, 'k'}};

QString nonFinite(double v) {
  if (std::isnan(v)) return QStringLiteral("nan");
  return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
}

}  // namespace

double niceStep(double span, int targetTicks) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(targetTicks, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;  // in [1, 10)
  // The nearest of 1, 2, 5, 10 on a log scale (the cut-offs are their geometric means, as d3 does).
  const double nice = r >= std::sqrt(50.0) ? 10 : r >= std::sqrt(10.0) ? 5 : r >= std::sqrt(2.0) ? 2 : 1;
  return nice * mag;
}

std::vector<double> linearTicks(double lo, double hi, int targetTicks, double* step) {
  std::vector<double> ticks;
  if (lo > hi) std::swap(lo, hi);
  const double s = niceStep(hi - lo, targetTicks);
  if (step) *step = s;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  const double first = std::ceil(lo / s - 1e-9);
  for (double k = first; k * s <= hi + s * 1e-9 && ticks.size() < 100; k += 1) {
    const double t = k * s;
    ticks.push_back(std::fabs(t) < s * 1e-9 ? 0.0 : t);  // an exact zero, not 1e-17
  }
  return ticks;
}

std::vector<double> decadeTicks(double log10Lo, double log10Hi, int targetTicks) {
  std::vector<double> ticks;
  if (!std::isfinite(log10Lo) || !std::isfinite(log10Hi)) return ticks;
  if (log10Lo > log10Hi) std::swap(log10Lo, log10Hi);
  const double e0 = std::ceil(log10Lo - 1e-9);
  const double e1 = std::floor(log10Hi + 1e-9);
  const double count = e1 - e0 + 1;
  if (count < 2) return ticks;
  const double k = std::max(1.0, std::ceil(count / std::max(targetTicks, 1)));
  for (double e = std::ceil(e0 / k) * k; e <= e1 && ticks.size() < 100; e += k) ticks.push_back(e);
  if (ticks.size() < 2) ticks = {e0, e1};
  return ticks;
}

std::vector<double> logTicks(double lo, double hi, int targetTicks) {
  if (!(lo > 0) || !std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return {};
  const int most = std::max(4, 2 * targetTicks);
  std::vector<std::vector<double>> candidates;
  std::vector<double> decades;
  for (double e : decadeTicks(std::log10(lo), std::log10(hi), targetTicks)) decades.push_back(std::pow(10.0, e));
  candidates.push_back(std::move(decades));
  for (const std::vector<int>& mantissas : {std::vector<int>{1, 2, 5}, std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<double> ticks;
    for (int e = int(std::floor(std::log10(lo))); e <= int(std::ceil(std::log10(hi))) && ticks.size() <= 100; ++e)
      for (int m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    candidates.push_back(std::move(ticks));
  }
  for (const auto& ticks : candidates)
    if (ticks.size() >= 3 && int(ticks.size()) <= most) return ticks;
  const std::vector<double>* fullest = nullptr;
  for (const auto& ticks : candidates)
    if (ticks.size() >= 2 && int(ticks.size()) <= most && (!fullest || ticks.size() > fullest->size()))
      fullest = &ticks;
  return fullest ? *fullest : std::vector<double>{};
}

QString formatTick(double value, double step) {
  if (!std::isfinite(value)) return nonFinite(value);
  step = std::fabs(step);
  const double a = std::fabs(value);
  if (!(step > 0) || !std::isfinite(step)) step = a > 0 ? a : 1;
  if (a < step * 1e-6) return QStringLiteral("0");
  // Scientific for the very large and the small, and where a fine step would need many decimals.
  if (a >= 1e15 || a < 1e-2 || (step < 1e-4 && a < 1)) {
    const int e = static_cast<int>(std::floor(std::log10(a)));
    const int digits = std::clamp(e - static_cast<int>(std::floor(std::log10(step) + 1e-9)), 0, 6);
    return scientific(value, digits);
  }
  for (const Unit& u : kUnits) {
    if (a >= u.factor) {
      const int decimals = decimalsFor(step / u.factor);
      if (decimals > 3) break;  // a deep zoom on large values: spell them out
      return trimZeros(QString::number(value / u.factor, 'f', decimals)) + QLatin1Char(u.suffix);
    }
  }
  return trimZeros(QString::number(value, 'f', decimalsFor(step)));
}

QString formatValue(double value) {
  if (!std::isfinite(value)) return nonFinite(value);
  const double a = std::fabs(value);
  if (a == 0) return QStringLiteral("0");
  if (a >= 1e15 || a < 1e-3) return scientific(value, 3);
  for (const Unit& u : kUnits)
    if (a >= u.factor) return QString::number(value / u.factor, 'g', 4) + QLatin1Char(u.suffix);
  return QString::number(value, 'g', 4);
}

std::pair<double, double> robustRange(std::vector<double>& values) {
  const auto [minIt, maxIt] = std::minmax_element(values.begin(), values.end());
  const double mn = *minIt, mx = *maxIt;
  const std::size_t n = values.size();
  if (n < 3) return {mn, mx};
  // Linearly interpolated quantile; nth_element keeps this O(n).
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(n - 1);
    const std::size_t k = static_cast<std::size_t>(pos);
    std::nth_element(values.begin(), values.begin() + k, values.end());
    const double a = values[k];
    if (k + 1 >= n) return a;
    const double b = *std::min_element(values.begin() + k + 1, values.end());
    return a + (b - a) * (pos - static_cast<double>(k));
  };
  const double q01 = quantile(0.01);
  const double q99 = quantile(0.99);
  const double span = q99 - q01;
  if (!(span > 0)) return {mn, mx};  // (nearly) constant bulk: nothing to judge outliers against
  const double lo = q01 - mn > 1.5 * span ? q01 - 0.1 * span : mn;
  const double hi = mx - q99 > 1.5 * span ? q99 + 0.1 * span : mx;
  return {lo, hi};
}

}  // namespace ps::ui::axis
