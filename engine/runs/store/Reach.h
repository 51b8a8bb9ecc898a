#pragma once
// When a curve of evaluations first reaches a target (accuracy at or above it, perplexity at or below it): the first
// point that is there and the one before, with the fraction of the way between them where the target falls, so any
// measure recorded at the points (step, emulated seconds, wire bytes) can be read there by linear interpolation.
// One definition for the suites' verdicts and the compare view's time and bytes to target.
#include <optional>
#include <vector>

namespace ps {

template <class Point>
struct Reach {
  const Point* before = nullptr;  // null when the first point is already there
  const Point* at = nullptr;
  double fraction = 1;  // 0 at `before`, 1 at `at`

  // A measure of the points, read where the target falls.
  template <class Measure>
  double read(Measure measure) const {
    if (!before) return measure(*at);
    return measure(*before) + fraction * (measure(*at) - measure(*before));
  }
};

// `value(point)` is the curve's value; nullopt when no point reaches the target.
template <class Point, class Value>
std::optional<Reach<Point>> reach(const std::vector<Point>& curve, double target, bool higherIsBetter, Value value) {
  const Point* previous = nullptr;
  for (const Point& p : curve) {
    const double v = value(p);
    if (higherIsBetter ? v >= target : v <= target) {
      Reach<Point> r;
      r.at = &p;
      if (previous && value(*previous) != v) {
        r.before = previous;
        r.fraction = (target - value(*previous)) / (v - value(*previous));
      }
      return r;
    }
    previous = &p;
  }
  return std::nullopt;
}

}  // namespace ps
