#include "app/ui/charts/Decimate.h"

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {

bool finitePoint(const QPointF& p) {
  return std::isfinite(p.x()) && std::isfinite(p.y());
}

}  // namespace

// Notes beyond the header: points with a NaN or infinite coordinate are dropped (a line bridges them); a
// non-finite range means the whole series; x0 > x1 is swapped; columns < 1 counts as one column. The result has at
// most 4 * columns + 2 points.
std::vector<QPointF> decimate(const std::vector<QPointF>& points, double x0, double x1, int columns) {
  std::vector<QPointF> out;
  if (points.empty()) return out;
  if (!std::isfinite(x0) || !std::isfinite(x1)) {
    x0 = points.front().x();
    x1 = points.back().x();
    if (!std::isfinite(x0) || !std::isfinite(x1)) return out;
  }
  if (x0 > x1) std::swap(x0, x1);
  columns = std::max(columns, 1);

  const auto byX = [](const QPointF& p, double x) { return p.x() < x; };
  const auto xBy = [](double x, const QPointF& p) { return x < p.x(); };
  const auto first = std::lower_bound(points.begin(), points.end(), x0, byX);  // first with x >= x0
  const auto last = std::upper_bound(first, points.end(), x1, xBy);            // first with x > x1

  out.reserve(std::min<std::size_t>(static_cast<std::size_t>(last - first), 4 * std::size_t(columns)) + 2);
  if (first != points.begin() && finitePoint(*(first - 1))) out.push_back(*(first - 1));

  if (last - first <= 4 * static_cast<std::ptrdiff_t>(columns)) {
    // Few enough already: keep them all.
    for (auto it = first; it != last; ++it)
      if (finitePoint(*it)) out.push_back(*it);
  } else {
    const double span = x1 - x0;
    const double scale = span > 0 ? columns / span : 0;
    int column = -1;
    // Indices (relative to `first`) of the current column's first, lowest, highest and last point.
    std::ptrdiff_t iFirst = 0, iMin = 0, iMax = 0, iLast = 0;
    const auto flush = [&] {
      if (column < 0) return;
      std::ptrdiff_t keep[4] = {iFirst, iMin, iMax, iLast};
      std::sort(keep, keep + 4);
      for (int k = 0; k < 4; ++k)
        if (k == 0 || keep[k] != keep[k - 1]) out.push_back(first[keep[k]]);
    };
    for (auto it = first; it != last; ++it) {
      if (!finitePoint(*it)) continue;
      const std::ptrdiff_t i = it - first;
      const int c = std::clamp(static_cast<int>((it->x() - x0) * scale), 0, columns - 1);
      if (c != column) {
        flush();
        column = c;
        iFirst = iMin = iMax = iLast = i;
        continue;
      }
      iLast = i;
      if (it->y() < first[iMin].y()) iMin = i;
      if (it->y() > first[iMax].y()) iMax = i;
    }
    flush();
  }

  if (last != points.end() && finitePoint(*last)) out.push_back(*last);
  return out;
}

}  // namespace ps::ui
