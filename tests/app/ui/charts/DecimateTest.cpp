// decimate(): the points a line through the visible range needs, at most four per pixel column.
#include "app/ui/charts/Decimate.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using ps::ui::decimate;

namespace {

// Sorted random series: x strictly increasing with random gaps, y noisy.
std::vector<QPointF> randomSeries(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> gap(0.01, 1.0), noise(-5.0, 5.0);
  std::vector<QPointF> pts;
  double x = 0;
  for (std::size_t i = 0; i < n; ++i) {
    x += gap(rng);
    pts.emplace_back(x, std::sin(x / 20) * 10 + noise(rng));
  }
  return pts;
}

int columnOf(double x, double x0, double x1, int columns) {
  return std::clamp(static_cast<int>((x - x0) / (x1 - x0) * columns), 0, columns - 1);
}

// True if `sub` is a subsequence of `all` (same points, same order).
bool isSubsequence(const std::vector<QPointF>& sub, const std::vector<QPointF>& all) {
  std::size_t j = 0;
  for (const QPointF& p : sub) {
    while (j < all.size() && all[j] != p) ++j;
    if (j == all.size()) return false;
    ++j;
  }
  return true;
}

}  // namespace

class DecimateTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void keepsColumnExtremesAgainstBruteForce() {
    const std::vector<QPointF> pts = randomSeries(20000, 42);
    const double x0 = pts[3000].x() + 0.001, x1 = pts[17000].x() - 0.001;
    for (int columns : {1, 7, 100, 640}) {
      const std::vector<QPointF> out = decimate(pts, x0, x1, columns);
      QVERIFY(isSubsequence(out, pts));
      QVERIFY(out.size() <= static_cast<std::size_t>(4 * columns + 2));

      // Brute force: min and max y per column over all points in range, and the same over the output.
      const double inf = std::numeric_limits<double>::infinity();
      std::vector<double> wantMin(columns, inf), wantMax(columns, -inf), gotMin(columns, inf), gotMax(columns, -inf);
      for (const QPointF& p : pts) {
        if (p.x() < x0 || p.x() > x1) continue;
        const int c = columnOf(p.x(), x0, x1, columns);
        wantMin[c] = std::min(wantMin[c], p.y());
        wantMax[c] = std::max(wantMax[c], p.y());
      }
      for (const QPointF& p : out) {
        if (p.x() < x0 || p.x() > x1) continue;
        const int c = columnOf(p.x(), x0, x1, columns);
        gotMin[c] = std::min(gotMin[c], p.y());
        gotMax[c] = std::max(gotMax[c], p.y());
      }
      for (int c = 0; c < columns; ++c) {
        QCOMPARE(gotMin[c], wantMin[c]);
        QCOMPARE(gotMax[c], wantMax[c]);
      }
    }
  }

  void keepsOneNeighbourOnEachSide() {
    const std::vector<QPointF> pts = randomSeries(5000, 7);
    const double x0 = (pts[1000].x() + pts[1001].x()) / 2, x1 = (pts[4000].x() + pts[4001].x()) / 2;
    const std::vector<QPointF> out = decimate(pts, x0, x1, 50);
    QVERIFY(out.size() >= 2);
    QCOMPARE(out.front(), pts[1000]);  // the last point before the range
    QCOMPARE(out.back(), pts[4001]);   // the first point after it
    QCOMPARE(out[1], pts[1001]);       // the first point inside (a column's first)
    QCOMPARE(out[out.size() - 2], pts[4000]);
    // Everything else lies inside the range.
    for (std::size_t i = 1; i + 1 < out.size(); ++i) QVERIFY(out[i].x() >= x0 && out[i].x() <= x1);
  }

  void rangeBeyondTheDataKeepsAll() {
    const std::vector<QPointF> pts = randomSeries(100, 3);
    const std::vector<QPointF> out = decimate(pts, -1e9, 1e9, 1000);  // 4 * 1000 >= 100: nothing to drop
    QCOMPARE(out.size(), pts.size());
    QVERIFY(out == pts);
  }

  void rangeBetweenTwoPointsKeepsBoth() {
    const std::vector<QPointF> pts{{0, 1}, {10, 2}};
    const std::vector<QPointF> out = decimate(pts, 4, 6, 100);
    QCOMPARE(out.size(), std::size_t(2));
    QCOMPARE(out[0], pts[0]);
    QCOMPARE(out[1], pts[1]);
  }

  void emptyAndSinglePoint() {
    QVERIFY(decimate({}, 0, 1, 100).empty());
    const std::vector<QPointF> one{{0.5, 3}};
    QCOMPARE(decimate(one, 0, 1, 100).size(), std::size_t(1));
    QCOMPARE(decimate(one, 0, 1, 100).front(), one.front());
    // Outside the range it is still a neighbour.
    QCOMPARE(decimate(one, 1, 2, 100).size(), std::size_t(1));
    QCOMPARE(decimate(one, -2, -1, 100).size(), std::size_t(1));
  }

  void nonPositiveColumnsCountAsOne() {
    const std::vector<QPointF> pts = randomSeries(1000, 11);
    for (int columns : {0, -5}) {
      const std::vector<QPointF> out = decimate(pts, pts.front().x(), pts.back().x(), columns);
      QVERIFY(!out.empty());
      QVERIFY(out.size() <= 6);
      QVERIFY(isSubsequence(out, pts));
      const auto [mn, mx] =
          std::minmax_element(pts.begin(), pts.end(), [](const QPointF& a, const QPointF& b) { return a.y() < b.y(); });
      QVERIFY(std::find(out.begin(), out.end(), *mn) != out.end());
      QVERIFY(std::find(out.begin(), out.end(), *mx) != out.end());
    }
  }

  void reversedAndDegenerateRanges() {
    const std::vector<QPointF> pts = randomSeries(1000, 5);
    const double a = pts[100].x(), b = pts[900].x();
    QVERIFY(decimate(pts, b, a, 20) == decimate(pts, a, b, 20));
    const std::vector<QPointF> same = decimate(pts, a, a, 20);  // one x: that point and its neighbours
    QCOMPARE(same.size(), std::size_t(3));
    QCOMPARE(same[1], pts[100]);
  }

  void nonFinitePointsAreDropped() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<QPointF> pts{{0, 1}, {1, nan}, {2, 3}, {3, std::numeric_limits<double>::infinity()}, {4, 5}};
    const std::vector<QPointF> out = decimate(pts, 0, 4, 100);
    QCOMPARE(out.size(), std::size_t(3));
    for (const QPointF& p : out) QVERIFY(std::isfinite(p.y()));
  }
};

QTEST_MAIN(DecimateTest)
#include "DecimateTest.moc"
