// smoothEma(): TensorBoard's debiased exponential moving average.
#include "app/ui/charts/Smoothing.h"

#include <QtTest>

#include <cmath>
#include <limits>

using ps::ui::smoothEma;

class SmoothingTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void weightZeroIsIdentity() {
    const std::vector<QPointF> in{{0, 3}, {1, -1}, {2, 7.5}, {5, 2}};
    QVERIFY(smoothEma(in, 0) == in);
    QVERIFY(smoothEma({}, 0.9).empty());
  }

  void constantStaysConstant() {
    std::vector<QPointF> in;
    for (int i = 0; i < 50; ++i) in.emplace_back(i, 4.25);
    for (double w : {0.3, 0.6, 0.9, 0.99}) {
      const std::vector<QPointF> out = smoothEma(in, w);
      QCOMPARE(out.size(), in.size());
      QCOMPARE(out.front().y(), 4.25);  // debiased: the first output is the first input
      for (std::size_t i = 0; i < out.size(); ++i) {
        QCOMPARE(out[i].x(), in[i].x());
        QVERIFY(std::fabs(out[i].y() - 4.25) < 1e-9);
      }
    }
  }

  void knownValues() {
    // w = 0.5 over 1, 2, 3:
    //   s1 = 0.5                 / (1 - 0.5)   = 1
    //   s2 = 0.25 + 1 = 1.25     / (1 - 0.25)  = 5/3
    //   s3 = 0.625 + 1.5 = 2.125 / (1 - 0.125) = 17/7
    const std::vector<QPointF> out = smoothEma({{10, 1}, {20, 2}, {30, 3}}, 0.5);
    QCOMPARE(out.size(), std::size_t(3));
    QVERIFY(std::fabs(out[0].y() - 1.0) < 1e-12);
    QVERIFY(std::fabs(out[1].y() - 5.0 / 3.0) < 1e-12);
    QVERIFY(std::fabs(out[2].y() - 17.0 / 7.0) < 1e-12);
    QCOMPARE(out[2].x(), 30.0);
  }

  void nonFiniteInputsAreSkipped() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<QPointF> out = smoothEma({{0, 1}, {1, nan}, {2, 2}, {3, inf}, {4, 3}}, 0.5);
    QCOMPARE(out.size(), std::size_t(5));
    // The skipped points keep the last value, and the average goes on as if they were not there.
    QVERIFY(std::fabs(out[0].y() - 1.0) < 1e-12);
    QCOMPARE(out[1].y(), out[0].y());
    QVERIFY(std::fabs(out[2].y() - 5.0 / 3.0) < 1e-12);
    QCOMPARE(out[3].y(), out[2].y());
    QVERIFY(std::fabs(out[4].y() - 17.0 / 7.0) < 1e-12);
    // Before any finite value there is nothing to keep.
    const std::vector<QPointF> lead = smoothEma({{0, nan}, {1, 2}}, 0.5);
    QVERIFY(std::isnan(lead[0].y()));
    QCOMPARE(lead[1].y(), 2.0);
  }

  void outOfRangeWeights() {
    const std::vector<QPointF> in{{0, 1}, {1, 2}};
    QVERIFY(smoothEma(in, -0.5) == in);
    const std::vector<QPointF> heavy = smoothEma(in, 1.0);  // clamped below 1: finite, near the first value
    QVERIFY(std::isfinite(heavy[1].y()));
    QVERIFY(heavy[1].y() >= 1.0 && heavy[1].y() <= 2.0);
  }
};

QTEST_MAIN(SmoothingTest)
#include "SmoothingTest.moc"
