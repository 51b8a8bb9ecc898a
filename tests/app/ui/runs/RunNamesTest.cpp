// Display names: unique among the runs shown, built from what differs between them; setting values as the table
// writes them.
#include "app/ui/runs/RunNames.h"

#include "RunsTestStore.h"

#include <QtTest>

#include <set>

using ps::ui::RunSeries;

class RunNamesTest : public QObject {
  Q_OBJECT

  static RunSeries run(int64_t id, nlohmann::json config, const std::string& name, const std::string& tags = "") {
    RunSeries r;
    r.info.id = id;
    r.info.name = name;
    r.info.tags = tags;
    r.config = std::move(config);
    return r;
  }
  static std::vector<const RunSeries*> pointers(const std::vector<RunSeries>& runs) {
    std::vector<const RunSeries*> out;
    for (const auto& r : runs) out.push_back(&r);
    return out;
  }

 private Q_SLOTS:
  // Six runs of one suite share a long title; their names differ where the runs do: the variant and the seed.
  void suiteRunsAreNamedByVariantAndSeed() {
    std::vector<RunSeries> runs;
    const std::string title = "Smoke test: TopK 10% with error feedback keeps accuracy within a point of dense";
    int64_t id = 10;
    for (int seed : {1, 2, 3})
      for (const char* variant : {"dense", "topk-ef"}) {
        auto config = ps::test::runConfig(std::string(variant) == "dense" ? 1.0 : 0.1);
        config["train"]["seed"] = seed;
        runs.push_back(run(id++, config, title + " (" + variant + ", seed " + std::to_string(seed) + ")",
                           "suite:smoke,variant:" + std::string(variant) + ",seed:" + std::to_string(seed)));
      }
    const auto names = ps::ui::displayNames(pointers(runs));
    std::set<QString> distinct;
    for (const auto& r : runs) distinct.insert(names.of(r));
    QCOMPARE(distinct.size(), runs.size());
    QCOMPARE(names.of(runs[0]), QStringLiteral("#10 · dense · seed 1"));
    QCOMPARE(names.of(runs[5]), QStringLiteral("#15 · topk-ef · seed 3"));
    // The suite is the same for all, and the variant already says how the settings differ.
    QVERIFY(!names.of(runs[1]).contains(QStringLiteral("smoke")));
    QVERIFY(!names.of(runs[1]).contains(QStringLiteral("fwd k")));
    // A seed group goes by its first run without the seed.
    QCOMPARE(names.groupOf(runs[1]), QStringLiteral("#11 · topk-ef"));
  }

  // Runs of no suite: the settings that differ, with K as a percentage, at most three and then a count.
  void otherRunsAreNamedByTheSettingsThatDiffer() {
    auto a = ps::test::runConfig(0.1), b = ps::test::runConfig(0.05);
    std::vector<RunSeries> runs{run(1, a, "same name"), run(2, b, "same name")};
    auto names = ps::ui::displayNames(pointers(runs));
    QCOMPARE(names.of(runs[0]), QStringLiteral("#1 · fwd k 10 %"));
    QCOMPARE(names.of(runs[1]), QStringLiteral("#2 · fwd k 5 %"));

    auto c = b;
    c["compression"]["forward"]["method"] = "randk";
    c["train"]["lr"] = 0.5;
    c["pipeline"]["microbatches"] = 7;
    c["train"]["seed"] = 9;
    runs.push_back(run(3, c, "same name"));
    names = ps::ui::displayNames(pointers(runs));
    const QString third = names.of(runs[2]);
    QVERIFY2(third.startsWith(QStringLiteral("#3 · seed 9 · ")), qPrintable(third));
    QVERIFY2(third.endsWith(QStringLiteral(" · +1")), qPrintable(third));  // four settings differ: three named
    QVERIFY2(!third.contains(QStringLiteral("same name")), qPrintable(third));
    QCOMPARE(names.groupOf(runs[2]), QString(third).remove(QStringLiteral("seed 9 · ")));
  }

  // Nothing differs, or a run alone: the id and the stored name; a run the names were not made for, the same.
  void runsThatDoNotDifferKeepTheirStoredName() {
    const auto config = ps::test::runConfig(0.1);
    std::vector<RunSeries> runs{run(4, config, "baseline"), run(5, config, "")};
    const auto names = ps::ui::displayNames(pointers(runs));
    QCOMPARE(names.of(runs[0]), QStringLiteral("#4 baseline"));
    QCOMPARE(names.of(runs[1]), QStringLiteral("#5"));
    QCOMPARE(names.of(run(6, config, "elsewhere")), QStringLiteral("#6 elsewhere"));
  }

  void settingValuesReadAsTheRunsTableWritesThem() {
    QCOMPARE(ps::ui::settingText("compression.forward.k", 0.05), QStringLiteral("5 %"));
    QCOMPARE(ps::ui::settingText("compression.boundaries.1.backward.k", 0.001), QStringLiteral("0.1 %"));
    QCOMPARE(ps::ui::settingText("compression.forward.k", 1.0), QStringLiteral("1"));  // not a fraction: as it is
    QCOMPARE(ps::ui::settingText("train.max_steps", 0), QStringLiteral("no limit"));
    QCOMPARE(ps::ui::settingText("train.max_steps", 300), QStringLiteral("300"));
    QCOMPARE(ps::ui::settingText("pipeline.stages", 0), QStringLiteral("0"));  // 0 means no limit only where it does
    QCOMPARE(ps::ui::settingText("compression.forward.method", "topk"), QStringLiteral("topk"));
    QCOMPARE(ps::ui::settingText("train.lr", 0.002), QStringLiteral("0.002"));
  }
};

QTEST_GUILESS_MAIN(RunNamesTest)
#include "RunNamesTest.moc"
