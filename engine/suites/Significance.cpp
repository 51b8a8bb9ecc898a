#include "engine/suites/Significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ps {
namespace {

// The continued fraction of the regularised incomplete beta function (modified Lentz), for x < (a + 1)/(a + b + 2)
// where it converges fast.
double betaFraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    for (int half = 0; half < 2; ++half) {
      const double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = 1 / (std::abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (std::abs(c) < tiny) c = tiny;
      h *= c * d;
      if (half == 1 && std::abs(c * d - 1) < eps) return h;
    }
  }
  return h;
}

// I_x(a, b), the regularised incomplete beta function.
double regularisedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * betaFraction(a, b, x) / a;
  return 1 - front * betaFraction(b, a, 1 - x) / b;
}

}  // namespace

double studentTwoSidedP(double t, int df) {
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return 0;
  const double v = double(df);
  return std::clamp(regularisedBeta(v / 2, 0.5, v / (v + t * t)), 0.0, 1.0);
}

double studentQuantile(double q, int df) {
  // P(T <= x) = 1 - p(x) / 2 for x >= 0, and p falls as x grows: bisect on it.
  const double target = 2 * (1 - q);
  double lo = 0, hi = 1;
  while (studentTwoSidedP(hi, df) > target) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (studentTwoSidedP(mid, df) > target ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TTest pairedTTest(double mean, double sd, int n) {
  TTest r;
  const double se = sd / std::sqrt(double(n));
  const double half = studentQuantile(1 - kVerdictAlpha / 2, n - 1) * se;
  r.ciLow = mean - half;
  r.ciHigh = mean + half;
  if (se == 0) {
    r.t = mean == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), mean);
    r.p = mean == 0 ? 1 : 0;
    return r;
  }
  r.t = mean / se;
  r.p = studentTwoSidedP(r.t, n - 1);
  return r;
}

double signTestTwoSidedP(int positive, int negative) {
  const int n = positive + negative, k = std::min(positive, negative);
  if (n == 0) return 1;
  double tail = 0;  // P(X <= k), summed in logs so large n stays exact enough
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

int signTestSeedsToDecide() {
  int n = 1;
  while (signTestTwoSidedP(n, 0) >= kVerdictAlpha) ++n;
  return n;
}

std::vector<double> holmAdjusted(const std::vector<double>& p) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> out(p.size(), std::numeric_limits<double>::quiet_NaN());
  const double m = double(order.size());
  double running = 0;  // step-down: an adjusted p never falls below the one before it
  for (size_t j = 0; j < order.size(); ++j) {
    running = std::max(running, std::min(1.0, (m - double(j)) * p[order[j]]));
    out[order[j]] = running;
  }
  return out;
}

std::optional<int> seedsToDecide(double mean, double sd, int limit) {
  if (mean == 0 || !std::isfinite(mean) || !std::isfinite(sd)) return std::nullopt;
  for (int n = 3; n <= limit; ++n)
    if (std::abs(mean) > studentQuantile(1 - kVerdictAlpha / 2, n - 1) * sd / std::sqrt(double(n))) return n;
  return std::nullopt;
}

}  // namespace ps
