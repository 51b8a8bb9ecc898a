// RunsModel under QAbstractItemModelTester: refresh, add, delete, edit, visibility, sort values, best metrics.
#include "app/ui/runs/RunsFilterProxy.h"
#include "app/ui/runs/RunsModel.h"

#include "RunsTestStore.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QtTest>

#include <cmath>

using ps::ui::RunColumn;
using ps::ui::RunsModel;

class RunsModelTest : public QObject {
  Q_OBJECT

  static QVariant cell(const RunsModel& m, qint64 id, RunColumn c, int role = Qt::DisplayRole) {
    return m.index(m.rowOf(id), int(c)).data(role);
  }

 private Q_SLOTS:
  void refreshAddDeleteUnderTheTester() {
    ps::test::TestStore t;
    const auto a = t.addRun("a", ps::test::runConfig(0.1), 10);
    const auto b = t.addRun("b", ps::test::runConfig(0.05), 10);
    RunsModel model(t.store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);  // empty until the first refresh
    model.refresh();
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), ps::ui::kRunColumnCount);
    QCOMPARE(model.runId(0), b);  // newest first
    QCOMPARE(model.rowOf(a), 1);
    QCOMPARE(model.rowOf(12345), -1);
    QCOMPARE(model.runId(7), qint64(0));

    // A refresh with nothing new keeps the rows (a selection on them survives).
    QItemSelectionModel selection(&model);
    selection.select(model.index(model.rowOf(a), 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    model.refresh();
    QCOMPARE(resets.count(), 0);

    // A new run is inserted, a deleted one removed, without a reset; the selection stays on run a.
    const auto c = t.addRun("c", ps::test::runConfig(0.2), 5, /*running=*/true);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    model.refresh();
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.runId(0), c);
    t.store->deleteRun(b);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.refresh();
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(resets.count(), 0);
    const auto rows = selection.selectedRows();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(model.runId(rows.front().row()), a);
  }

  void editsGoToTheStore() {
    ps::test::TestStore t;
    const auto a = t.addRun("before", ps::test::runConfig(0.1), 5);
    RunsModel model(t.store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.refresh();
    const QModelIndex name = model.index(0, int(RunColumn::Name));
    QVERIFY(model.flags(name) & Qt::ItemIsEditable);
    QVERIFY(!(model.flags(model.index(0, int(RunColumn::Status))) & Qt::ItemIsEditable));
    QVERIFY(model.setData(name, QStringLiteral("after")));
    QCOMPARE(QString::fromStdString(t.store->run(a)->name), QStringLiteral("after"));
    QCOMPARE(name.data().toString(), QStringLiteral("after"));
    QVERIFY(model.setData(model.index(0, int(RunColumn::Tags)), QStringLiteral(" x , y,,x ")));
    QCOMPARE(QString::fromStdString(t.store->run(a)->tags), cell(model, a, RunColumn::Tags).toString());
    QVERIFY(cell(model, a, RunColumn::Tags).toString().contains(QLatin1Char('y')));
    QVERIFY(model.setData(model.index(0, int(RunColumn::Notes)), QStringLiteral("two\nlines")));
    QCOMPARE(QString::fromStdString(t.store->run(a)->notes), QStringLiteral("two\nlines"));
    QVERIFY(!model.setData(model.index(0, int(RunColumn::Status)), QStringLiteral("finished")));

    // A run deleted behind the model's back: the edit fails with a message rather than throwing.
    QSignalSpy errors(&model, &RunsModel::errorOccurred);
    t.store->deleteRun(a);
    QVERIFY(!model.setData(name, QStringLiteral("gone")));
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.front().front().toString().contains(QStringLiteral("refresh")));
  }

  void visibilityFlagsSurviveRefresh() {
    ps::test::TestStore t;
    const auto a = t.addRun("a", ps::test::runConfig(0.1), 5);
    const auto b = t.addRun("b", ps::test::runConfig(0.1), 5);
    RunsModel model(t.store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.refresh();
    const QModelIndex box = model.index(model.rowOf(a), int(RunColumn::Visible));
    QVERIFY(model.flags(box) & Qt::ItemIsUserCheckable);
    QCOMPARE(box.data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
    QVERIFY(box.data(Qt::DecorationRole).value<QColor>().isValid());
    QSignalSpy changed(&model, &RunsModel::visibilityChanged);
    QVERIFY(model.setData(box, int(Qt::Unchecked), Qt::CheckStateRole));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.visibleIds(), QList<qint64>{b});
    t.addRun("c", ps::test::runConfig(0.1), 5);
    model.refresh();
    QCOMPARE(model.visibleIds().size(), 2);
    QVERIFY(!model.visibleIds().contains(a));
    QCOMPARE(model.index(model.rowOf(a), 0).data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
  }

  void sortValuesAreNumbersAndEmptiesSortLast() {
    ps::test::TestStore t;
    const auto five = t.addRun("five", ps::test::runConfig(0.1), 5);
    const auto hundred = t.addRun("hundred", ps::test::runConfig(0.1), 100);
    const auto twenty = t.addRun("twenty", ps::test::runConfig(0.1), 20);
    const auto none = t.store->createRun("empty", "", "test");  // no config, no metrics, still running
    RunsModel model(t.store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.refresh();
    QCOMPARE(cell(model, hundred, RunColumn::Steps, RunsModel::SortRole).userType(), int(QMetaType::Double));
    QCOMPARE(cell(model, hundred, RunColumn::Steps, RunsModel::SortRole).toDouble(), 100.0);
    QVERIFY(!cell(model, none, RunColumn::Steps, RunsModel::SortRole).isValid());
    QCOMPARE(cell(model, five, RunColumn::FwdK, RunsModel::SortRole).toDouble(), 0.1);
    QCOMPARE(cell(model, five, RunColumn::FwdK).toString(), QStringLiteral("10 %"));
    QCOMPARE(cell(model, five, RunColumn::BwdBits, RunsModel::SortRole).toDouble(), 4.0);
    QCOMPARE(cell(model, five, RunColumn::Stages).toString(), QStringLiteral("3"));
    QCOMPARE(cell(model, five, RunColumn::FwdMethod).toString(), QStringLiteral("topk"));
    QCOMPARE(cell(model, five, RunColumn::Ratio, RunsModel::SortRole).toDouble(), 4.0);

    ps::ui::RunsFilterProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto order = [&] {
      QList<qint64> ids;
      for (int r = 0; r < proxy.rowCount(); ++r) ids << model.runId(proxy.mapToSource(proxy.index(r, 0)).row());
      return ids;
    };
    proxy.sort(int(RunColumn::Steps), Qt::AscendingOrder);
    QCOMPARE(order(), (QList<qint64>{five, twenty, hundred, none}));  // numeric, not "100" < "20" < "5"
    proxy.sort(int(RunColumn::Steps), Qt::DescendingOrder);
    QCOMPARE(order(), (QList<qint64>{hundred, twenty, five, none}));  // the empty one still last
  }

  void aSettingChangedMidRunShowsWhereItStartedAndEnded() {
    ps::test::TestStore t;
    const auto changed = t.addRun("changed", ps::test::runConfig(0.1), 30, false,
                                  {ps::test::settingEvent(10, "compression.forward.k", 0.1, 0.05),
                                   ps::test::settingEvent(20, "compression.forward.k", 0.05, 0.02),
                                   ps::test::settingEvent(25, "compression.backward.method", "quantize", "none"),
                                   ps::test::settingEvent(26, "train.lr", 0.001, 0.0005)});
    const auto steady = t.addRun("steady", ps::test::runConfig(0.1), 30);
    RunsModel model(t.store);
    model.refresh();
    QCOMPARE(cell(model, changed, RunColumn::FwdK).toString(), QStringLiteral("10 % → 2 %"));
    QCOMPARE(cell(model, changed, RunColumn::BwdMethod).toString(), QStringLiteral("quantize → none"));
    QCOMPARE(cell(model, changed, RunColumn::FwdMethod).toString(), QStringLiteral("topk"));
    QCOMPARE(cell(model, steady, RunColumn::FwdK).toString(), QStringLiteral("10 %"));
    // Sorting goes by where the run started.
    QCOMPARE(cell(model, changed, RunColumn::FwdK, RunsModel::SortRole).toDouble(), 0.1);
    // A finished run's row is reused at a refresh, changes included.
    model.refresh();
    QCOMPARE(cell(model, changed, RunColumn::FwdK).toString(), QStringLiteral("10 % → 2 %"));
  }

  // The time to a target accuracy, as recorded and at another network: the accuracy passes 0.62 at step 12, 3 s in
  // (0.25 s a step); at 50 Mbit/s the run with traces took 0.35 s a step; the one without cannot be re-timed.
  void timeToTargetFollowsTheTargetAndTheNetwork() {
    ps::test::TestStore t;
    const auto traced = t.addRun("traced", ps::test::runConfig(0.1), 20);
    const auto bare = t.addRun("bare", ps::test::runConfig(0.1), 20);
    t.addTraces(traced, 20);
    RunsModel m(t.store);
    m.refresh();
    const int col = int(ps::ui::RunColumn::TimeToTarget);
    auto cell = [&](qint64 id, int role) { return m.data(m.index(m.rowOf(id), col), role); };
    QSignalSpy changed(&m, &RunsModel::dataChanged);
    m.setTimeTarget({0.62, 20, {}});
    QCOMPARE(changed.size(), 1);
    QCOMPARE(cell(traced, RunsModel::SortRole).toDouble(), 3.0);
    QCOMPARE(cell(bare, RunsModel::SortRole).toDouble(), 3.0);
    QCOMPARE(cell(traced, Qt::DisplayRole).toString(), QStringLiteral("3.0 s"));
    ps::RetimeNetwork slower;
    slower.bandwidth_mbps = 50;
    slower.latency_ms = 0;
    m.setTimeTarget({0.62, 20, slower});
    QVERIFY(std::abs(cell(traced, RunsModel::SortRole).toDouble() - 4.2) < 1e-6);
    QVERIFY(!cell(bare, RunsModel::SortRole).isValid());
    QVERIFY(cell(bare, Qt::DisplayRole).toString().contains(QStringLiteral("no step traces")));
    QVERIFY(cell(traced, Qt::ToolTipRole).toString().contains(QStringLiteral("at 50 Mbit/s, 0 ms")));
    m.setTimeTarget({0.99, 20, {}});
    QCOMPARE(cell(traced, Qt::DisplayRole).toString(), QStringLiteral("not reached"));
    QVERIFY(!cell(traced, RunsModel::SortRole).isValid());
  }

  void finalAndBestEvalFigures() {
    ps::test::TestStore t;
    const auto id = t.addRun("acc", ps::test::runConfig(0.1), 10);
    // eval/accuracy rises to a peak and falls back: best is the peak, final the last.
    t.store->append(id,
                    {{11, "eval/accuracy", 0.9, 6, 3},
                     {12, "eval/accuracy", 0.7, 6.5, 3.2},
                     {12, "eval/accuracy_uncompressed", 0.99, 6.5, 3.2}},
                    {}, {});
    const auto lm = t.addRun("lm", ps::test::runConfig(0.1, "brown_lm"), 10);
    const auto live = t.addRun("live", ps::test::runConfig(0.1), 7, /*running=*/true);
    RunsModel model(t.store);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.refresh();
    QCOMPARE(cell(model, id, RunColumn::BestEvalMetric, RunsModel::SortRole).toDouble(), 0.9);
    QCOMPARE(cell(model, id, RunColumn::BestEvalMetric).toString(), QStringLiteral("90.00 %"));
    QCOMPARE(cell(model, id, RunColumn::EvalMetric, RunsModel::SortRole).toDouble(), 0.6);       // from the summary
    QCOMPARE(cell(model, lm, RunColumn::BestEvalMetric, RunsModel::SortRole).toDouble(), 10.0);  // min perplexity
    QCOMPARE(cell(model, lm, RunColumn::EvalMetric, RunsModel::SortRole).toDouble(), 10.0);
    QCOMPARE(cell(model, id, RunColumn::WireBytes, RunsModel::SortRole).toDouble(), 10000.0);
    QCOMPARE(cell(model, id, RunColumn::WireBytes).toString(), QStringLiteral("10.0 KB"));
    // A running run has no summary yet: its latest figures come from the metrics.
    QCOMPARE(cell(model, live, RunColumn::Status).toString(), QStringLiteral("running"));
    QCOMPARE(cell(model, live, RunColumn::Steps, RunsModel::SortRole).toDouble(), 7.0);
    QCOMPARE(cell(model, live, RunColumn::TrainLoss, RunsModel::SortRole).toDouble(), 2.0 / 7);
    QCOMPARE(cell(model, live, RunColumn::WireBytes, RunsModel::SortRole).toDouble(), 7000.0);
    QCOMPARE(cell(model, live, RunColumn::BestEvalMetric, RunsModel::SortRole).toDouble(), 0.55);
    // The run goes on and then ends: a refresh picks up both.
    t.store->append(live, ps::test::stepPoints(8), {}, {});
    model.refresh();
    QCOMPARE(cell(model, live, RunColumn::Steps, RunsModel::SortRole).toDouble(), 8.0);
    t.store->finishRun(live, "stopped", "by the user", R"({"steps": 8, "train_loss": 0.25})");
    model.refresh();
    QCOMPARE(cell(model, live, RunColumn::Status).toString(), QStringLiteral("stopped"));
    QVERIFY(cell(model, live, RunColumn::Status, Qt::ToolTipRole).toString().contains(QStringLiteral("by the user")));
    QCOMPARE(cell(model, live, RunColumn::TrainLoss, RunsModel::SortRole).toDouble(), 0.25);
  }
};

QTEST_MAIN(RunsModelTest)
#include "RunsModelTest.moc"
