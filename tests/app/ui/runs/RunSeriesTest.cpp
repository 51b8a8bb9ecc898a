// RunSeries: points on each x axis, cumulative bytes, markers, and loading from the store.
#include "app/ui/runs/RunSeries.h"

#include "RunsTestStore.h"

#include <QtTest>

#include <cmath>

using ps::ui::RunSeries;
using ps::ui::XAxis;

class RunSeriesTest : public QObject {
  Q_OBJECT

  // Three steps; bytes/wire 100, 200, 300; wall 1.0, 2.0, 4.0; emulated 10, 20, 30.
  static RunSeries threeSteps() {
    RunSeries r;
    const double wall[] = {1.0, 2.0, 4.0}, em[] = {10, 20, 30}, bytes[] = {100, 200, 300};
    for (int s = 1; s <= 3; ++s) {
      r.append({s, "train/loss", 1.0 / s, wall[s - 1], em[s - 1]});
      r.append({s, "bytes/wire", bytes[s - 1], wall[s - 1], em[s - 1]});
    }
    return r;
  }

 private Q_SLOTS:
  void compactKeysFitBesideAMarker() {
    QCOMPARE(ps::ui::compactKey("compression.forward.k"), QStringLiteral("fwd k"));
    QCOMPARE(ps::ui::compactKey("compression.boundaries.1.backward.bits"), QStringLiteral("link1 bwd bits"));
    QCOMPARE(ps::ui::compactKey("train.lr"), QStringLiteral("lr"));
    QCOMPARE(ps::ui::compactKey("link.bandwidth_mbps"), QStringLiteral("link bandwidth_mbps"));
    QCOMPARE(ps::ui::settingLabel("setting", R"({"key":"compression.backward.method","from":"none","to":"topk"})"),
             QStringLiteral("bwd method = topk"));
  }

  void pointsOnEachAxis() {
    const RunSeries r = threeSteps();
    QVERIFY(r.has("train/loss"));
    QVERIFY(!r.has("eval/loss"));
    QVERIFY(r.points("eval/loss", XAxis::Step).empty());
    const double expectX[4][3] = {{1, 2, 3}, {1, 2, 4}, {10, 20, 30}, {100, 300, 600}};
    for (XAxis axis : {XAxis::Step, XAxis::WallTime, XAxis::EmulatedTime, XAxis::Bytes}) {
      const auto pts = r.points("train/loss", axis);
      QCOMPARE(pts.size(), size_t(3));
      for (int i = 0; i < 3; ++i) {
        QCOMPARE(pts[size_t(i)].x(), expectX[int(axis)][i]);
        QCOMPARE(pts[size_t(i)].y(), 1.0 / (i + 1));
      }
    }
    QCOMPARE(ps::ui::xAxisLabel(XAxis::Bytes), QStringLiteral("Wire bytes sent"));
  }

  void bytesAtIsCumulative() {
    RunSeries r = threeSteps();
    QCOMPARE(r.bytesAt(0), 0.0);
    QCOMPARE(r.bytesAt(1), 100.0);
    QCOMPARE(r.bytesAt(2), 300.0);
    QCOMPARE(r.bytesAt(3), 600.0);
    QCOMPARE(r.bytesAt(1000), 600.0);
    // Steps without a bytes/wire point keep the total of the last step that had one.
    r.append({7, "bytes/wire", 50, 5, 40});
    QCOMPARE(r.bytesAt(5), 600.0);
    QCOMPARE(r.bytesAt(7), 650.0);
  }

  void markersLandOnTheStepsX() {
    RunSeries r = threeSteps();
    r.appendEvent(ps::test::settingEvent(2, "compression.forward.k", 0.1, 0.05));
    r.appendEvent({3, 3.9, "pause", "{}"});
    r.appendEvent({3, 4.5, "resume", "{}"});
    r.appendEvent({1, 0.9, "reset", R"({"boundary":0,"direction":"fwd","reason":"x"})"});
    r.appendEvent({0, 0.0, "start", "{}"});       // not a marker
    r.appendEvent({3, 4.0, "checkpoint", "{}"});  // not a marker
    const double expectX[4] = {2, 2.0, 20, 300};
    for (XAxis axis : {XAxis::Step, XAxis::WallTime, XAxis::EmulatedTime, XAxis::Bytes}) {
      const auto m = r.markers(axis);
      QCOMPARE(m.size(), size_t(4));
      QCOMPARE(m[0].second, QStringLiteral("fwd k = 5 %"));
      QCOMPARE(m[0].first, expectX[int(axis)]);
    }
    const auto m = r.markers(XAxis::Step);
    QCOMPARE(m[1].second, QStringLiteral("pause"));
    QCOMPARE(m[2].second, QStringLiteral("resume"));
    QCOMPARE(m[3].second, QStringLiteral("reset link0 fwd"));
    QCOMPARE(r.markers(XAxis::WallTime)[3].first, 1.0);  // the reset at step 1: step 1's wall time
  }

  void markersBetweenStepsInterpolate() {
    RunSeries r;
    r.append({10, "train/loss", 1, 100, 1000});
    r.append({20, "train/loss", 1, 200, 3000});
    r.appendEvent(ps::test::settingEvent(15, "compression.forward.method", "topk", "randk"));
    QCOMPARE(r.markers(XAxis::WallTime)[0].first, 150.0);
    QCOMPARE(r.markers(XAxis::EmulatedTime)[0].first, 2000.0);
    QCOMPARE(r.markers(XAxis::Step)[0].first, 15.0);
    QCOMPARE(r.markers(XAxis::Step)[0].second, QStringLiteral("fwd method = randk"));
    // A run with no metrics yet: the wall axis falls back to the event's own time.
    RunSeries empty;
    empty.appendEvent({4, 7.5, "pause", "{}"});
    QCOMPARE(empty.markers(XAxis::WallTime)[0].first, 7.5);
    QCOMPARE(empty.markers(XAxis::Bytes)[0].first, 0.0);
  }

  void settingLabels() {
    QCOMPARE(ps::ui::settingLabel("setting", R"({"key":"compression.backward.bits","from":8,"to":4})"),
             QStringLiteral("bwd bits = 4"));
    QCOMPARE(ps::ui::settingLabel("setting", "not json"), QStringLiteral("setting"));
    QCOMPARE(ps::ui::settingLabel("pause", "{}"), QStringLiteral("pause"));
  }

  void loadEqualsWhatWasWritten() {
    ps::test::TestStore t;
    const auto config = ps::test::runConfig(0.05);
    const auto id = t.addRun("loaded", config, 10, false, {ps::test::settingEvent(4, "train.lr", 0.001, 0.01)});
    const RunSeries r = RunSeries::load(*t.store, id);
    QCOMPARE(r.info.id, id);
    QCOMPARE(QString::fromStdString(r.info.name), QStringLiteral("loaded"));
    QCOMPARE(QString::fromStdString(r.info.status), QStringLiteral("finished"));
    QVERIFY(r.config == config);
    const auto written = t.store->metrics(id);
    size_t total = 0;
    for (const auto& [key, pts] : r.metrics) total += pts.size();
    QCOMPARE(total, written.size());
    for (const auto& m : written) {
      const auto& pts = r.metrics.at(m.key);
      auto it = std::find_if(pts.begin(), pts.end(), [&](const ps::ui::SeriesPoint& p) { return p.step == m.step; });
      QVERIFY(it != pts.end());
      QCOMPARE(it->value, m.value);
      QCOMPARE(it->wall_s, m.wall_s);
      QCOMPARE(it->emulated_s, m.emulated_s);
    }
    QCOMPARE(r.bytesAt(10), 10000.0);
    QCOMPARE(r.events.size(), size_t(1));
    QCOMPARE(r.markers(XAxis::Step)[0].second, QStringLiteral("lr = 0.01"));
    QCOMPARE(r.markers(XAxis::Bytes)[0].first, 4000.0);
  }

  void loadToleratesABadConfigAndRejectsUnknownIds() {
    ps::test::TestStore t;
    // The store refuses malformed JSON, but keeps an empty config and any JSON document.
    for (const char* config : {"", "[1, 2]"}) {
      const auto id = t.store->createRun("odd config", config, "test");
      const RunSeries r = RunSeries::load(*t.store, id);
      QVERIFY(r.config.is_object());
      QVERIFY(r.config.empty());
      QVERIFY(r.metrics.empty());
    }
    const auto id = t.store->listRuns().front().id;
    QVERIFY_THROWS_EXCEPTION(ps::StoreError, RunSeries::load(*t.store, id + 100));
  }
};

QTEST_MAIN(RunSeriesTest)
#include "RunSeriesTest.moc"
