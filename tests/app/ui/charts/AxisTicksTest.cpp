// Axis helpers behind PlotWidget: nice steps, compact labels, decade ticks and the outlier-robust range.
#include "app/ui/charts/AxisTicks.h"
#include "app/ui/charts/Palette.h"

#include <QtTest>

#include <set>

#include <cstdint>
#include <limits>

namespace axis = ps::ui::axis;

class AxisTicksTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void niceSteps() {
    QCOMPARE(axis::niceStep(10, 5), 2.0);
    QCOMPARE(axis::niceStep(1, 4), 0.2);
    QCOMPARE(axis::niceStep(1, 2), 0.5);
    QCOMPARE(axis::niceStep(7000, 7), 1000.0);
    QCOMPARE(axis::niceStep(0, 5), 1.0);
    double step = 0;
    const std::vector<double> ticks = axis::linearTicks(-0.3, 1.05, 5, &step);
    QCOMPARE(step, 0.2);
    QCOMPARE(ticks.front(), -0.2);
    QVERIFY(std::fabs(ticks.back() - 1.0) < 1e-12);
    QVERIFY(std::find(ticks.begin(), ticks.end(), 0.0) != ticks.end());  // an exact zero
  }

  void compactLabels() {
    QCOMPARE(axis::formatTick(0, 0.5), QStringLiteral("0"));
    QCOMPARE(axis::formatTick(1.5, 0.5), QStringLiteral("1.5"));
    QCOMPARE(axis::formatTick(1200, 200), QStringLiteral("1.2k"));
    QCOMPARE(axis::formatTick(3000, 1000), QStringLiteral("3k"));
    QCOMPARE(axis::formatTick(3.4e6, 2e5), QStringLiteral("3.4M"));
    QCOMPARE(axis::formatTick(2e9, 1e9), QStringLiteral("2G"));
    QCOMPARE(axis::formatTick(1e-3, 1e-3), QStringLiteral("1e-3"));
    QCOMPARE(axis::formatTick(2.5e-4, 5e-5), QStringLiteral("2.5e-4"));
    QCOMPARE(axis::formatTick(-0.02, 0.01), QStringLiteral("-0.02"));
    QCOMPARE(axis::formatTick(1000.5, 0.5), QStringLiteral("1000.5"));  // a deep zoom spells the value out
    QCOMPARE(axis::formatValue(0.123456), QStringLiteral("0.1235"));
    QCOMPARE(axis::formatValue(12345), QStringLiteral("12.35k"));
    QCOMPARE(axis::formatValue(std::numeric_limits<double>::quiet_NaN()), QStringLiteral("nan"));
  }

  void decades() {
    const std::vector<double> d = axis::decadeTicks(-3.2, 1.5, 10);
    QCOMPARE(d, (std::vector<double>{-3, -2, -1, 0, 1}));
    QVERIFY(axis::decadeTicks(0.1, 0.9, 10).empty());    // under two decades: linear ticks instead
    QVERIFY(axis::decadeTicks(-30, 10, 5).size() <= 6);  // every k-th decade on a wide range
  }

  // A log axis has ticks over its whole range, not only near the top.
  void logTicksSpreadOverTheRange() {
    QCOMPARE(axis::logTicks(1e-3, 1e2, 6), (std::vector<double>{1e-3, 1e-2, 1e-1, 1, 10, 100}));  // decades
    // Bytes per step from 40k to 600k: one decade tick only, so 1-2-5, from the bottom of the range.
    const auto bytes = axis::logTicks(40e3, 600e3, 5);
    QCOMPARE(bytes, (std::vector<double>{50e3, 100e3, 200e3, 500e3}));
    // Loss below 2: digits of the decade.
    const auto loss = axis::logTicks(0.3, 1.8, 5);
    QVERIFY2(loss.size() >= 3 && loss.front() < 0.6 && loss.back() >= 1, qPrintable(QString::number(loss.size())));
    for (double v : loss) QVERIFY(v >= 0.3 && v <= 1.8);
    QVERIFY(axis::logTicks(1.1, 1.15, 5).empty());  // within one digit step: linear ticks instead
    QVERIFY(axis::logTicks(0, 10, 5).empty());
    QCOMPARE(axis::formatTick(0.5, 0.5), QStringLiteral("0.5"));
    QCOMPARE(axis::formatTick(50e3, 50e3), QStringLiteral("50k"));
  }

  void robustRange() {
    std::vector<double> plain{1, 2, 3, 4, 5};
    QCOMPARE(axis::robustRange(plain), std::make_pair(1.0, 5.0));
    std::vector<double> spiky;
    for (int i = 0; i < 500; ++i) spiky.push_back(1 + (i % 10) * 0.01);
    spiky.push_back(1e6);
    spiky.push_back(-1e6);
    const auto [lo, hi] = axis::robustRange(spiky);
    QVERIFY(lo > 0.9 && lo < 1.0);
    QVERIFY(hi > 1.09 && hi < 1.2);
    std::vector<double> flat(100, 2.0);
    flat.push_back(50);  // no spread to judge against: the plain range
    QCOMPARE(axis::robustRange(flat), std::make_pair(2.0, 50.0));
  }

  void paletteIsStable() {
    QCOMPARE(ps::ui::runColor(1), ps::ui::paletteColor(0));
    QCOMPARE(ps::ui::runColor(11), ps::ui::paletteColor(10));  // twenty runs in twenty colours
    QCOMPARE(ps::ui::runColor(21), ps::ui::paletteColor(0));
    QCOMPARE(ps::ui::runColor(2), ps::ui::paletteColor(1));
    QCOMPARE(ps::ui::runColor(0), ps::ui::paletteColor(19));
    QCOMPARE(ps::ui::paletteColor(-1), ps::ui::paletteColor(19));
    std::set<QRgb> distinct;
    for (int i = 0; i < 20; ++i) distinct.insert(ps::ui::paletteColor(i).rgb());
    QCOMPARE(distinct.size(), size_t(20));
    QVERIFY(ps::ui::runColor(std::numeric_limits<int64_t>::min()).isValid());
    QVERIFY(ps::ui::runColor(std::numeric_limits<int64_t>::max()).isValid());
    QVERIFY(ps::ui::paletteColor(0) != ps::ui::paletteColor(1));
    const QColor f = ps::ui::faint(ps::ui::paletteColor(3));
    QCOMPARE(f.rgb(), ps::ui::paletteColor(3).rgb());
    QVERIFY(f.alpha() < 128);
  }
};

QTEST_MAIN(AxisTicksTest)
#include "AxisTicksTest.moc"
