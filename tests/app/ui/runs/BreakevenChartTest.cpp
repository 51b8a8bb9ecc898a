// The compare view's Break-even tab: runs re-timed from 1 Mbit/s to 10 Gbit/s, time to the view's target on a log x
// axis, the crossing of a compressed and an uncompressed run marked and labelled, runs that cannot be mapped named.
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/BreakevenChart.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/TargetTable.h"

#include "RunsTestStore.h"

#include <QtTest>

#include <cmath>

using ps::ui::CompareView;

class BreakevenChartTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Two stages at the same accuracy per step (64% after 14 steps, read between the evaluations at 10 and 15): float32
  // sends 10 Mbit after 150 ms of compute a step; the codec's run 1 Mbit after 162 ms of compute and codec. Equal where
  // 0.15 + 10 / B = 0.162 + 1 / B: at 750 Mbit/s, below which the codec's run is faster.
  void theCrossingOfACompressedAndAnUncompressedRunIsMarked() {
    ps::test::TestStore t;
    nlohmann::json dense = ps::test::runConfig(0.1);
    dense["compression"]["forward"]["method"] = "none";
    dense["compression"]["backward"]["method"] = "none";
    const int64_t plain = t.addRun("float32", dense, 20);
    t.addTraces(plain, 20);
    const int64_t coded = t.addRun("coded", ps::test::runConfig(0.1), 20);
    t.addCompressedTraces(coded, 20);
    const int64_t bare = t.addRun("bare", ps::test::runConfig(0.1), 20);  // saved no traces
    CompareView view;
    view.resize(1200, 900);
    view.setRuns(t.store, {plain, coded, bare});
    view.targetTable()->setTarget(64);
    ps::ui::BreakevenChart* chart = view.breakevenChart();
    chart->refresh();
    QVERIFY2(chart->map(), qPrintable(chart->summary()));
    const ps::BreakevenMap& m = *chart->map();
    QCOMPARE(m.runs.size(), size_t(2));
    QCOMPARE(m.target, 0.64);
    const auto at100 = std::find(m.bandwidths.begin(), m.bandwidths.end(), 100.0) - m.bandwidths.begin();
    QVERIFY(std::abs(*m.runs[0].seconds[size_t(at100)] - 14 * 0.25) < 1e-4);
    QVERIFY(std::abs(*m.runs[1].seconds[size_t(at100)] - 14 * 0.172) < 1e-4);
    QCOMPARE(m.pairs.size(), size_t(1));
    QCOMPARE(m.pairs[0].crossings.size(), size_t(1));
    QVERIFY2(std::abs(m.pairs[0].crossings[0] - 750) < 750 * 2e-3,
             qPrintable(QString::number(m.pairs[0].crossings[0])));

    ps::ui::PlotWidget* plot = chart->plot();
    QVERIFY(plot->logX());
    QCOMPARE(plot->pointCount(QStringLiteral("run%1").arg(plain)), int(m.bandwidths.size()));
    QCOMPARE(plot->pointCount(QStringLiteral("run%1").arg(coded)), int(m.bandwidths.size()));
    QCOMPARE(plot->markers().size(), size_t(1));
    QVERIFY2(plot->markers()[0].label.contains(QStringLiteral("below 750 Mbit/s")),
             qPrintable(plot->markers()[0].label));
    QVERIFY2(chart->summary().contains(
                 QStringLiteral("#3 · bwd method quantize · fwd method topk is left out: it saved no step traces")),
             qPrintable(chart->summary()));
    QVERIFY(chart->summary().contains(QStringLiteral("eval/accuracy 0.64")));

    // A target nobody reaches: both runs are named, neither is dropped.
    view.targetTable()->setTarget(95);
    chart->refresh();
    QVERIFY(chart->map());
    QVERIFY2(chart->summary().contains(QStringLiteral("does not reach the target (not reached)")),
             qPrintable(chart->summary()));
    QCOMPARE(plot->pointCount(QStringLiteral("run%1").arg(plain)), 0);
  }
};

QTEST_MAIN(BreakevenChartTest)
#include "BreakevenChartTest.moc"
