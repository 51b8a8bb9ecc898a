#include "app/ui/charts/Smoothing.h"

#include <cmath>

namespace ps::ui {

std::vector<QPointF> smoothEma(const std::vector<QPointF>& points, double weight) {
  // Out-of-range weights are clamped: w >= 1 would freeze the average at zero (and divide by 1 - 1^t = 0).
  if (!(weight > 0)) return points;  // also catches NaN
  const double w = std::fmin(weight, 0.999999);

  std::vector<QPointF> out;
  out.reserve(points.size());
  double s = 0;       // the biased running average
  double wPow = 1;    // w^t over the finite inputs seen so far
  bool seen = false;  // at least one finite input
  double shown = 0;   // the last debiased value
  for (const QPointF& p : points) {
    const double y = p.y();
    if (!std::isfinite(y)) {
      // Skipped: the output keeps the last value (or passes the NaN through before any finite input).
      out.emplace_back(p.x(), seen ? shown : y);
      continue;
    }
    s = w * s + (1 - w) * y;
    wPow *= w;
    shown = s / (1 - wPow);
    seen = true;
    out.emplace_back(p.x(), shown);
  }
  return out;
}

}  // namespace ps::ui
