// Seed groups: which runs group together, and the mean and min–max band of their lines.
#include "app/ui/runs/SeedGroups.h"

#include "RunsTestStore.h"

#include <QtTest>

using ps::ui::RunSeries;

class SeedGroupsTest : public QObject {
  Q_OBJECT

  static RunSeries run(int64_t id, nlohmann::json config) {
    RunSeries r;
    r.info.id = id;
    r.config = std::move(config);
    return r;
  }

 private Q_SLOTS:
  void runsDifferingOnlyInSeedGroup() {
    auto base = ps::test::runConfig(0.1);
    auto seed2 = base, seed3 = base, otherK = base, renamed = base;
    seed2["train"]["seed"] = 2;
    seed3["train"]["seed"] = 3;
    otherK["compression"]["forward"]["k"] = 0.05;
    renamed["run"]["name"] = "another name";  // names, tags and notes do not change training
    renamed["run"]["tags"] = "x";
    const RunSeries a = run(1, base), b = run(2, otherK), c = run(3, seed2), d = run(4, seed3), e = run(5, renamed),
                    broken = run(6, nlohmann::json("not an object"));
    const auto groups = ps::ui::seedGroups({&a, &b, &c, &d, &e, &broken});
    QCOMPARE(groups.size(), size_t(3));
    QCOMPARE(groups[0], (std::vector<const RunSeries*>{&a, &c, &d, &e}));
    QCOMPARE(groups[1], (std::vector<const RunSeries*>{&b}));
    QCOMPARE(groups[2], (std::vector<const RunSeries*>{&broken}));
  }

  void bandIsTheMeanMinAndMaxWhereEveryLineHasData() {
    // Different x: each line is read by interpolation, only inside the range both cover (2 .. 10).
    const std::vector<QPointF> a = {{0, 0}, {10, 10}}, b = {{2, 4}, {4, 8}, {12, 0}};
    const auto band = ps::ui::seedBand({a, b});
    QCOMPARE(band.mean, (std::vector<QPointF>{{2, 3}, {4, 6}, {10, 6}}));
    QCOMPARE(band.lo, (std::vector<QPointF>{{2, 2}, {4, 4}, {10, 2}}));
    QCOMPARE(band.hi, (std::vector<QPointF>{{2, 4}, {4, 8}, {10, 10}}));
    QVERIFY(ps::ui::seedBand({a, {}}).mean.empty());
    QVERIFY(ps::ui::seedBand({{{0, 1}, {1, 1}}, {{2, 1}, {3, 1}}}).mean.empty());  // no common range
    QVERIFY(ps::ui::seedBand({}).mean.empty());
  }
};

QTEST_MAIN(SeedGroupsTest)
#include "SeedGroupsTest.moc"
