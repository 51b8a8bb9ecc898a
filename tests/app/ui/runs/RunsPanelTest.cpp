// RunsPanel: filter, column state, exports, delete rules and the compare request.
#include "app/ui/runs/RunExports.h"
#include "app/ui/runs/RunsFilterProxy.h"
#include "app/ui/runs/RunsPanel.h"
#include "engine/tensorboard/TensorBoardExport.h"

#include "RunsTestStore.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include <nlohmann/json.hpp>

using ps::ui::RunColumn;
using ps::ui::RunsPanel;

class RunsPanelTest : public QObject {
  Q_OBJECT

  static QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

 private Q_SLOTS:
  // The results come right after the name; a long name is capped and elided in its middle; nothing wraps; the time
  // to target says which time and which target.
  void theResultsFollowTheNameAndTheTimeToTargetSaysWhich() {
    ps::test::TestStore t;
    t.addRun(std::string(200, 'n') + " the end that differs", ps::test::runConfig(0.1), 5);
    RunsPanel panel(t.store);
    QHeaderView* header = panel.view()->horizontalHeader();
    const int name = header->visualIndex(int(RunColumn::Name));
    QCOMPARE(header->visualIndex(int(RunColumn::EvalMetric)), name + 1);
    QCOMPARE(header->visualIndex(int(RunColumn::TimeToTarget)), name + 5);
    QVERIFY(header->sectionSize(int(RunColumn::Name)) <= 360);
    QCOMPARE(panel.view()->textElideMode(), Qt::ElideMiddle);
    QVERIFY(!panel.view()->wordWrap());
    const auto title = [&] {
      return panel.model()->headerData(int(RunColumn::TimeToTarget), Qt::Horizontal).toString();
    };
    QVERIFY2(title().contains(QStringLiteral("Emulated time to 80 %")), qPrintable(title()));
    QSignalSpy headers(panel.model(), &QAbstractItemModel::headerDataChanged);
    auto target = panel.model()->timeTarget();
    target.accuracy = 0.9;
    panel.model()->setTimeTarget(target);
    QCOMPARE(headers.count(), 1);
    QVERIFY2(title().contains(QStringLiteral("90 %")), qPrintable(title()));
  }

  void filterNarrowsTheRows() {
    ps::test::TestStore t;
    t.addRun("alpha", ps::test::runConfig(0.1), 5);
    const auto beta = t.addRun("beta", ps::test::runConfig(0.1), 5);
    t.store->setTags(beta, "baseline,fast");
    auto lm = ps::test::runConfig(0.1, "brown_lm");
    lm["compression"]["forward"]["method"] = "randk";
    const auto gamma = t.addRun("gamma", lm, 5);
    t.store->setNotes(gamma, "Tried a Higher LR");
    RunsPanel panel(t.store);
    QAbstractItemModelTester tester(panel.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(panel.proxy()->rowCount(), 3);
    panel.setFilterText(QStringLiteral("BETA"));  // name, case-insensitive
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.filterEdit()->setText(QStringLiteral("baseline"));  // tags, through the line edit
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.setFilterText(QStringLiteral("higher lr"));  // notes
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.setFilterText(QStringLiteral("randk"));  // forward method
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.setFilterText(QStringLiteral("quantize"));  // every run's backward method
    QCOMPARE(panel.proxy()->rowCount(), 3);
    panel.setFilterText(QStringLiteral("finished"));  // status
    QCOMPARE(panel.proxy()->rowCount(), 3);
    panel.setFilterText(QStringLiteral("no such run"));
    QCOMPARE(panel.proxy()->rowCount(), 0);
    panel.setFilterText(QString());
    QCOMPARE(panel.proxy()->rowCount(), 3);
  }

  // The field terms `runs list --filter` takes work in the table too; a mistyped one hides nothing and says why.
  void filterTakesFieldsAndExplainsAMistake() {
    ps::test::TestStore t;
    t.addRun("mild", ps::test::runConfig(0.3), 5);
    const auto strong = t.addRun("strong", ps::test::runConfig(0.01), 5);
    t.store->setTags(strong, "suite-1");
    t.addRun("lm", ps::test::runConfig(0.05, "brown_lm"), 5);
    RunsPanel panel(t.store);
    QSignalSpy errors(panel.proxy(), &ps::ui::RunsFilterProxy::filterErrorChanged);
    panel.setFilterText(QStringLiteral("k<0.1"));
    QCOMPARE(panel.proxy()->rowCount(), 2);
    panel.setFilterText(QStringLiteral("k<0.1 task:fashion"));
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.setFilterText(QStringLiteral("tag:suite-1 status:finished steps=5"));
    QCOMPARE(panel.proxy()->rowCount(), 1);
    panel.setFilterText(QStringLiteral("-k>=0.3 bits=4"));
    QCOMPARE(panel.proxy()->rowCount(), 2);
    QCOMPARE(errors.count(), 0);
    panel.setFilterText(QStringLiteral("kk<0.1"));
    QCOMPARE(panel.proxy()->rowCount(), 3);
    QCOMPARE(errors.count(), 1);
    QVERIFY(panel.proxy()->filterError().contains(QStringLiteral("no field 'kk'")));
    QVERIFY(panel.filterEdit()->toolTip().contains(QStringLiteral("no field 'kk'")));
    QVERIFY(panel.filterErrorLabel()->text().contains(QStringLiteral("no field 'kk'")));  // beside the box
    QVERIFY(!panel.filterErrorLabel()->isHidden());
    panel.setFilterText(QStringLiteral("k<0.1"));
    QCOMPARE(errors.count(), 2);
    QVERIFY(panel.proxy()->filterError().isEmpty());
    QVERIFY(!panel.filterEdit()->toolTip().contains(QStringLiteral("no field")));
    QVERIFY(panel.filterErrorLabel()->isHidden());
    QCOMPARE(panel.proxy()->rowCount(), 2);
  }

  void columnStateRoundTrips() {
    ps::test::TestStore t;
    t.addRun("a", ps::test::runConfig(0.1), 5);
    RunsPanel panel(t.store);
    const QByteArray state = panel.saveState();
    QVERIFY(!state.isEmpty());
    panel.setColumnHidden(RunColumn::Tags, true);
    panel.view()->horizontalHeader()->hideSection(int(RunColumn::Latency));
    panel.view()->horizontalHeader()->moveSection(int(RunColumn::Name), int(RunColumn::Notes));
    QVERIFY(panel.isColumnHidden(RunColumn::Tags));
    QVERIFY(panel.isColumnHidden(RunColumn::Latency));
    const QByteArray changed = panel.saveState();
    QVERIFY(panel.restoreState(state));
    QVERIFY(!panel.isColumnHidden(RunColumn::Tags));
    QVERIFY(!panel.isColumnHidden(RunColumn::Latency));
    QCOMPARE(panel.view()->horizontalHeader()->visualIndex(int(RunColumn::Name)), int(RunColumn::Name));
    // And a fresh panel takes the changed layout.
    RunsPanel other(t.store);
    QVERIFY(other.restoreState(changed));
    QVERIFY(other.isColumnHidden(RunColumn::Tags));
    QCOMPARE(other.view()->horizontalHeader()->visualIndex(int(RunColumn::Name)), int(RunColumn::Notes));
  }

  void exportsWriteTheRun() {
    ps::test::TestStore t;
    const auto config = ps::test::runConfig(0.05);
    const auto id = t.addRun("exported", config, 6);
    const QString csv = t.dir.filePath(QStringLiteral("run.csv"));
    QCOMPARE(ps::ui::exportRunCsv(*t.store, id, csv), QString());
    const QList<QByteArray> lines = readAll(csv).split('\n');
    QVERIFY(lines.front().startsWith("step,wall_s,emulated_s,"));
    QVERIFY(lines.front().contains("train/loss"));
    QVERIFY(lines.front().contains("bytes/wire"));
    QCOMPARE(lines.size(), 1 + 6 + 1);  // header, six steps, and the final newline
    QVERIFY(lines[1].startsWith("1,"));

    const QString preset = t.dir.filePath(QStringLiteral("run.json"));
    QCOMPARE(ps::ui::exportRunConfig(*t.store, id, preset), QString());
    const auto parsed = nlohmann::json::parse(readAll(preset).toStdString());
    QVERIFY(parsed == config);
    QVERIFY(readAll(preset).contains("\n  \"compression\""));  // pretty-printed
    // The file is a valid preset: it validates to the same full config.
    QVERIFY(ps::Config::fromJson(parsed, "exported preset").json == config);

    // Errors say what to do instead of throwing.
    QVERIFY(!ps::ui::exportRunCsv(*t.store, id, QStringLiteral("/nonexistent-dir/x/run.csv")).isEmpty());
    QVERIFY(!ps::ui::exportRunCsv(*t.store, id + 99, t.dir.filePath(QStringLiteral("none.csv"))).isEmpty());
    QVERIFY(ps::ui::exportRunConfig(*t.store, id + 99, t.dir.filePath(QStringLiteral("none.json")))
                .contains(QStringLiteral("refresh")));

    // TensorBoard: a folder per run with one event file, or (a build without protobuf) the reason for every run.
    const auto second = t.addRun("second", config, 3);
    const QString board = t.dir.filePath(QStringLiteral("tb"));
    const QString error = ps::ui::exportRunsTensorBoard(*t.store, {id, second}, board);
    if (ps::tensorboard::available()) {
      QCOMPARE(error, QString());
      const QStringList folders = QDir(board).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
      QCOMPARE(folders,
               (QStringList{QStringLiteral("run-%1-exported").arg(id), QStringLiteral("run-%1-second").arg(second)}));
      for (const QString& folder : folders) {
        const QFileInfoList files = QDir(board + QLatin1Char('/') + folder).entryInfoList(QDir::Files);
        QCOMPARE(files.size(), 1);
        QVERIFY(files[0].fileName().startsWith(QStringLiteral("events.out.tfevents.")));
        QVERIFY(files[0].size() > 200);
      }
    } else {
      QCOMPARE(error.count(QStringLiteral("no TensorBoard export")), 2);
    }
    QVERIFY(ps::ui::exportRunsTensorBoard(*t.store, {id + 99}, board).contains(QStringLiteral("no run with id")));
  }

  void deleteRefusesARunningRun() {
    ps::test::TestStore t;
    const auto done = t.addRun("done", ps::test::runConfig(0.1), 3);
    const auto live = t.addRun("live", ps::test::runConfig(0.1), 3, /*running=*/true);
    RunsPanel panel(t.store);
    QCOMPARE(panel.model()->rowCount(), 2);
    const QString refused = panel.deleteRun(live);
    QVERIFY(refused.contains(QStringLiteral("running")));
    QVERIFY(t.store->run(live).has_value());
    // Delete on a selection with a running run says so at once, before any confirmation, and deletes nothing.
    QSignalSpy errors(&panel, &RunsPanel::errorOccurred);
    panel.selectRuns({done, live});
    panel.deleteSelected();
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.front().front().toString().contains(QStringLiteral("Run %1 is still running").arg(live)));
    QVERIFY(t.store->run(done).has_value());
    QCOMPARE(panel.deleteRun(done), QString());
    QVERIFY(!t.store->run(done).has_value());
    QCOMPARE(panel.model()->rowCount(), 1);
    QCOMPARE(panel.model()->runId(0), live);
  }

  void compareNeedsTwoRuns() {
    ps::test::TestStore t;
    const auto a = t.addRun("a", ps::test::runConfig(0.1), 3);
    const auto b = t.addRun("b", ps::test::runConfig(0.2), 3);
    const auto c = t.addRun("c", ps::test::runConfig(0.3), 3);
    RunsPanel panel(t.store);
    QSignalSpy compare(&panel, &RunsPanel::compareRequested);
    QSignalSpy status(&panel, &RunsPanel::statusMessage);
    panel.selectRuns({b});
    QCOMPARE(panel.selectedRunIds(), QList<qint64>{b});
    QVERIFY(!panel.compareAction()->isEnabled());
    panel.compareSelected();
    QCOMPARE(compare.count(), 0);
    QCOMPARE(status.count(), 1);
    panel.selectRuns({a, c});
    QVERIFY(panel.compareAction()->isEnabled());
    panel.compareSelected();
    QCOMPARE(compare.count(), 1);
    auto ids = compare.front().front().value<QList<qint64>>();
    std::sort(ids.begin(), ids.end());
    QCOMPARE(ids, (QList<qint64>{a, c}));
    // The selection survives a refresh that adds a run.
    t.addRun("d", ps::test::runConfig(0.4), 3);
    panel.refresh();
    QCOMPARE(panel.model()->rowCount(), 4);
    QCOMPARE(panel.selectedRunIds().size(), 2);
  }
};

QTEST_MAIN(RunsPanelTest)
#include "RunsPanelTest.moc"
