// The Timeline tab: a saved or live run's step timeline drawn by the chart adapter's Gantt chart, its step picker,
// what-if and decomposition, and the trace export.
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/RunExports.h"
#include "app/ui/runs/TimelineView.h"

#include "RunsTestStore.h"

#include <QTabWidget>
#include <QtTest>

#include <fstream>

using ps::ui::GanttWidget;
using ps::ui::TimelineView;

class TimelineViewTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Two stages at 100 Mbit/s (RunsTestStore.h): stage 0 computes 125 ms and sends 10 Mbit, stage 1 waits for it
  // and computes 25 ms: 250 ms a step.
  void aSavedRunShowsItsLastStepAndAnyOther() {
    ps::test::TestStore t;
    const int64_t id = t.addRun("r", ps::test::runConfig(0.1), 5);
    t.addTraces(id, 5);
    TimelineView view;
    view.resize(1000, 500);
    view.show();
    view.setTraces(id, t.store->traces(id));
    QCOMPARE(view.steps(), (std::vector<int64_t>{1, 2, 3, 4, 5}));
    QCOMPARE(view.step(), int64_t(5));
    QVERIFY(view.recorded());
    QVERIFY(std::abs(view.recorded()->step_s - 0.25) < 1e-6);  // durations are kept at float precision
    QVERIFY(!view.whatIf());
    const auto& bands = view.chart()->bands();
    QCOMPARE(bands.size(), size_t(1));
    QCOMPARE(bands[0].rows.size(), size_t(3));  // two stages and the link's forward direction
    QCOMPARE(bands[0].rows[2].name, QStringLiteral("link 0 fwd"));
    QCOMPARE(bands[0].arrows.size(), size_t(1));
    QVERIFY2(view.decompositionText().contains(QStringLiteral("critical path (links 40.0%): stage 0")),
             qPrintable(view.decompositionText()));
    view.showStep(3);
    QCOMPARE(view.step(), int64_t(3));
    QVERIFY(view.chart()->bands()[0].title.startsWith(QStringLiteral("Step 3 as recorded")));

    // Hovering a bar names it; the wheel's zoom narrows the range around the pointer, a double click shows it all.
    GanttWidget* chart = view.chart();
    const QRectF wait = chart->barRect(0, 1, 0);  // stage 1's wait for the activation
    QVERIFY2(chart->tipAt(wait.center()).startsWith(QStringLiteral("stage 1: waiting (activation)")),
             qPrintable(chart->tipAt(wait.center())));
    QVERIFY(chart->tipAt(chart->barRect(0, 2, 0).center()).contains(QStringLiteral("1250000 bytes")));
    const auto all = chart->range();
    chart->zoom(0.5, 0.1);
    QCOMPARE(chart->range().second - chart->range().first, (all.second - all.first) / 2);
    QVERIFY(chart->range().first > 0);
    QTest::mouseDClick(chart, Qt::LeftButton, {}, QPoint(200, 60));
    QCOMPARE(chart->range(), all);
  }

  void whatIfIsDrawnBeneathTheRecordedStep() {
    ps::test::TestStore t;
    const int64_t id = t.addRun("r", ps::test::runConfig(0.1), 2);
    t.addTraces(id, 2);
    TimelineView view;
    view.setTraces(id, t.store->traces(id));
    ps::RetimeNetwork slower;
    slower.bandwidth_mbps = 50;
    view.setWhatIf(slower, 1);
    QVERIFY(view.whatIf());
    QVERIFY(std::abs(view.whatIf()->step_s - 0.35) < 1e-6);
    QCOMPARE(view.chart()->bands().size(), size_t(2));
    QVERIFY(view.chart()->bands()[1].title.startsWith(QStringLiteral("What if (50 Mbit/s")));
    QVERIFY2(view.decompositionText().contains(QStringLiteral("lengthens by 40.0%")), qPrintable(view.decompositionText()));
    view.setWhatIf({}, 1);
    QVERIFY(!view.whatIf());
    QCOMPARE(view.chart()->bands().size(), size_t(1));

    // The saved steps go to a trace file that parses.
    const QString file = t.dir.path() + QStringLiteral("/run.json");
    QCOMPARE(view.exportTrace(file), QString());
    std::ifstream in(file.toStdString());
    const auto trace = nlohmann::json::parse(in);
    QVERIFY(trace["traceEvents"].size() > 10);
  }

  // Runs > Export Trace: a saved run's steps to a file; a run without traces says why and writes nothing.
  void theRunsMenuExportsARunsTrace() {
    ps::test::TestStore t;
    const int64_t traced = t.addRun("traced", ps::test::runConfig(0.1), 3);
    t.addTraces(traced, 3);
    const int64_t bare = t.addRun("bare", ps::test::runConfig(0.1), 3);
    const QString file = t.dir.path() + QStringLiteral("/trace.json");
    QCOMPARE(ps::ui::exportRunTrace(*t.store, traced, file), QString());
    std::ifstream in(file.toStdString());
    QCOMPARE(nlohmann::json::parse(in)["otherData"]["run"], traced);
    const QString none = t.dir.path() + QStringLiteral("/none.json");
    const QString why = ps::ui::exportRunTrace(*t.store, bare, none);
    QVERIFY2(why.contains(QStringLiteral("has no timeline to export")), qPrintable(why));
    QVERIFY(!QFile::exists(none));
  }

  // On the wall clock: the events where they ran (waits are gaps), what-if off; a trace without wall times says so.
  void theWallClockShowsWhereEventsRan() {
    ps::test::TestStore t;
    const int64_t id = t.addRun("r", ps::test::runConfig(0.1), 1);
    t.addTraces(id, 1);
    ps::StepTrace trace = ps::decodeTrace(t.store->traces(id).front().trace);
    trace.lanes[0].events[0].wall = 0, trace.lanes[0].events[1].wall = 0.13;    // compute, send
    trace.lanes[1].events[0].wall = 0.2, trace.lanes[1].events[1].wall = 0.21;  // decode after the wait, compute
    TimelineView view;
    view.show();
    view.addTrace(1, std::make_shared<const ps::StepTrace>(trace));
    ps::RetimeNetwork slower;
    slower.bandwidth_mbps = 50;
    view.setWhatIf(slower, 1);
    view.setWallClock(true);
    QVERIFY(!view.whatIf());
    const auto& bands = view.chart()->bands();
    QCOMPARE(bands.size(), size_t(1));
    QVERIFY2(bands[0].title.contains(QStringLiteral("wall clock")), qPrintable(bands[0].title));
    QCOMPARE(bands[0].rows[0].bars.size(), size_t(2));
    QCOMPARE(bands[0].rows[1].bars[1].start, 0.21);
    QCOMPARE(bands[0].rows[2].bars.size(), size_t(1));  // the message in flight, from its encode to its decode
    QCOMPARE(bands[0].rows[2].bars[0].end, 0.2);
    QVERIFY(bands[0].rows[1].bars[1].tip.contains(QStringLiteral("on this machine")));
    view.setWallClock(false);
    QVERIFY(view.whatIf());
    // A saved trace without wall times stays on the emulated clock and says why.
    view.setTraces(id, t.store->traces(id));
    view.setWallClock(true);
    QVERIFY(view.chart()->bands()[0].title.contains(QStringLiteral("no wall-clock times kept for this step")));
  }

  void aLiveRunFollowsItsNewestStepUntilOneIsPicked() {
    ps::test::TestStore t;
    const int64_t id = t.addRun("r", ps::test::runConfig(0.1), 4);
    t.addTraces(id, 4);
    const auto rows = t.store->traces(id);
    TimelineView view;
    view.show();
    for (size_t i = 0; i < 3; ++i)
      view.addTrace(rows[i].step, std::make_shared<const ps::StepTrace>(ps::decodeTrace(rows[i].trace)));
    QCOMPARE(view.step(), int64_t(3));
    view.showStep(2);
    view.addTrace(4, std::make_shared<const ps::StepTrace>(ps::decodeTrace(rows[3].trace)));
    QCOMPARE(view.step(), int64_t(2));
    QCOMPARE(view.steps().back(), int64_t(4));
    view.showStep(4);
    QCOMPARE(view.step(), int64_t(4));
  }
};

QTEST_MAIN(TimelineViewTest)
#include "TimelineViewTest.moc"
