// Saved runs in the main window, offscreen and without training: a run opens read-only in a tab of its own with
// every chart, heatmap and marker rebuilt from the store; the runs table's visibility tick and the compare view's
// run list are one setting; File ▸ Open Run Store… switches every view to another store and refuses what is not one.
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/charts/HeatmapWidget.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/RunsFilterProxy.h"
#include "app/ui/runs/RunsModel.h"
#include "app/ui/runs/RunsPanel.h"
#include "app/ui/runs/TimelineView.h"
#include "engine/runs/store/RunStore.h"

#include "../runs/RunsTestStore.h"

#include <QFile>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include <map>
#include <set>

using namespace ps::ui;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Double-clicks the cell of run `id` in `column`, as a user does in the runs table.
void doubleClickCell(RunsPanel* panel, qint64 id, RunColumn column) {
  QTableView* view = panel->view();
  const QModelIndex source = panel->model()->index(panel->model()->rowOf(id), int(column));
  const QModelIndex cell = panel->proxy()->mapFromSource(source);
  QVERIFY(cell.isValid());
  view->scrollTo(cell);
  const QPoint at = view->visualRect(cell).center();
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
}

bool hasRunSeries(PlotWidget* plot, qint64 id) {
  return plot->hasSeries(QStringLiteral("run%1").arg(id));
}

}  // namespace

class SavedRunsTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The run view holds the timeline in a tab beside its charts; a run saved without traces says so.
  void aSavedRunsPanelHasATimelineTab() {
    ps::test::TestStore t;
    const int64_t traced = t.addRun("traced", ps::test::runConfig(0.1), 3);
    t.addTraces(traced, 3);
    const int64_t bare = t.addRun("bare", ps::test::runConfig(0.1), 3);
    ps::ui::LivePanel panel;
    QCOMPARE(panel.showStoredRun(*t.store, traced), QString());
    QCOMPARE(panel.views()->count(), 2);
    QCOMPARE(panel.views()->tabText(1), QStringLiteral("Timeline"));
    QCOMPARE(panel.timeline()->step(), int64_t(3));
    // What if its link had used another saved run's codec: read from the store when picked.
    const int64_t compressed = t.addRun("compressed", ps::test::runConfig(0.1), 2);
    t.addCompressedTraces(compressed, 2);
    QCOMPARE(panel.showStoredRun(*t.store, traced), QString());
    QVERIFY(!panel.timeline()->whatIf());
    panel.timeline()->setCodecRun(compressed);
    QCOMPARE(panel.timeline()->codecRun(), compressed);
    QVERIFY(panel.timeline()->whatIf());
    QVERIFY2(std::abs(panel.timeline()->whatIf()->step_s - 0.172) < 1e-6,
             qPrintable(QString::number(panel.timeline()->whatIf()->step_s)));
    QVERIFY2(panel.timeline()->chart()->bands()[1].title.contains(
                 QStringLiteral("the codec of run %1 at step 2").arg(compressed)),
             qPrintable(panel.timeline()->chart()->bands()[1].title));
    panel.timeline()->setCodecRun(bare);  // no traces: nothing to try, and it says so
    QCOMPARE(panel.timeline()->codecRun(), int64_t(0));
    QVERIFY(!panel.timeline()->whatIf());
    QCOMPARE(panel.showStoredRun(*t.store, bare), QString());
    QCOMPARE(panel.timeline()->step(), int64_t(0));
    QVERIFY(panel.timeline()->steps().empty());
  }

  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("PipeSqueezeTest");
    QCoreApplication::setApplicationName("pipesqueeze-test-saved-runs");
  }

  void aSavedRunOpensReadOnlyInATabOfItsOwn() {
    ps::test::TestStore t;
    const auto config = ps::test::runConfig(0.1);
    const qint64 id =
        t.addRun("saved", config, 40, false,
                 {ps::test::settingEvent(20, "compression.forward.k", 0.1, 0.05), ps::test::resetEvent(30, 0, "forward")});
    const qint64 other = t.addRun("other", config, 10);
    std::vector<ps::HistogramRow> histograms;
    for (int64_t step : {10, 20, 30})
      for (int stage = 0; stage < 3; ++stage)
        histograms.push_back({step, "grad/stage" + std::to_string(stage), -1.0, 1.0, std::vector<float>(16, 2.0f)});
    t.store->append(id, {}, {}, histograms);

    MainWindow w(options(t));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.tabs()->count(), 2);
    // A double click on an editable cell edits it and opens nothing.
    doubleClickCell(w.runs(), id, RunColumn::Name);
    QCOMPARE(w.tabs()->count(), 2);
    doubleClickCell(w.runs(), id, RunColumn::Status);
    QCOMPARE(w.tabs()->count(), 3);
    auto* tab = qobject_cast<LivePanel*>(w.tabs()->currentWidget());
    QVERIFY(tab != nullptr && tab != w.live());
    QVERIFY(w.tabs()->tabText(w.tabs()->currentIndex()).startsWith(QStringLiteral("Run %1").arg(id)));
    QCOMPARE(tab->storedRun()->id, id);
    QCOMPARE(tab->lastStep(), int64_t(40));

    // Every chart that the run has data for is drawn, the loss with one point per step, and the change is marked,
    // with the compensation reset it caused, as the compare view marks them.
    int drawn = 0;
    for (PlotWidget* p : tab->plots()) {
      drawn += p->pointCount() > 0;
      bool marked = false, reset = false;
      for (const Marker& m : p->markers()) {
        marked |= m.x == 20 && m.label == "fwd k = 5 %";
        reset |= m.x == 30 && m.label == "reset link0 forward";
      }
      QVERIFY2(marked, qPrintable(p->title()));
      QVERIFY2(reset, qPrintable(p->title()));
    }
    QVERIFY2(drawn >= 4, qPrintable(QString::number(drawn)));
    // Within a chart every solid line has a colour of its own (a link's dashed raw bytes share its link's); a series
    // of one name has one colour in every chart ("train" in the loss and the accuracy chart).
    std::map<QString, QRgb> colourOf;
    for (PlotWidget* p : tab->plots()) {
      std::set<QRgb> solid;
      for (const LegendItem& item : p->legendItems()) {
        if (!item.style.dashed)
          QVERIFY2(solid.insert(item.style.color.rgb()).second, qPrintable(p->title() + ": " + item.label));
        const auto [at, fresh] = colourOf.emplace(item.label, item.style.color.rgb());
        QVERIFY2(fresh || at->second == item.style.color.rgb(), qPrintable(p->title() + ": " + item.label));
      }
    }
    QVERIFY(colourOf.count(QStringLiteral("train")) && colourOf.count(QStringLiteral("all links")));
    QVERIFY(colourOf.at(QStringLiteral("all links")) != colourOf.at(QStringLiteral("link 0 fwd")));
    QCOMPARE(int(tab->heatmaps().size()), 3);
    for (HeatmapWidget* h : tab->heatmaps()) QCOMPARE(h->columnCount(), 3);
    // The live tab is untouched.
    for (PlotWidget* p : w.live()->plots()) QCOMPARE(p->pointCount(), 0);

    // Opened again: the same tab, brought to the front; another run gets its own.
    w.tabs()->setCurrentWidget(w.compare());
    QVERIFY(w.openStoredRun(id).isEmpty());
    QCOMPARE(w.tabs()->count(), 3);
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(tab));
    QVERIFY(w.openStoredRun(other).isEmpty());
    QCOMPARE(w.storedRunTabs().size(), 2);
    QVERIFY(w.openStoredRun(9999).contains("9999"));
    QCOMPARE(w.storedRunTabs().size(), 2);

    // Ctrl+W closes the saved run's tab in front, and is off for the live and compare tabs.
    QAction* closeTab = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->shortcut() == QKeySequence(QKeySequence::Close)) closeTab = a;
    QVERIFY(closeTab);
    w.tabs()->setCurrentWidget(w.compare());
    QVERIFY(!closeTab->isEnabled());
    QVERIFY(w.openStoredRun(other).isEmpty());
    QVERIFY(closeTab->isEnabled());
    closeTab->trigger();
    QCOMPARE(w.storedRunTabs().size(), 1);
    QVERIFY(w.openStoredRun(other).isEmpty());
    // Saved-run tabs close; the live and compare tabs do not.
    Q_EMIT w.tabs()->tabCloseRequested(w.tabs()->indexOf(tab));
    Q_EMIT w.tabs()->tabCloseRequested(w.tabs()->indexOf(w.live()));
    Q_EMIT w.tabs()->tabCloseRequested(w.tabs()->indexOf(w.compare()));
    QCOMPARE(w.tabs()->count(), 3);
    QCOMPARE(w.storedRunTabs().size(), 1);
    // The title names the store; the window system adds the application's name.
    QVERIFY(!w.windowTitle().contains(QStringLiteral("PipeSqueeze")));
  }

  void theVisibilityTickHidesARunFromTheCompareView() {
    ps::test::TestStore t;
    const qint64 a = t.addRun("a", ps::test::runConfig(0.1), 10);
    const qint64 b = t.addRun("b", ps::test::runConfig(0.2), 10);
    const qint64 c = t.addRun("c", ps::test::runConfig(0.3), 10);
    MainWindow w(options(t));
    RunsModel* model = w.runs()->model();
    auto tick = [&](qint64 id) {
      return model->index(model->rowOf(id), int(RunColumn::Visible)).data(Qt::CheckStateRole);
    };

    // Unticked in the table before comparing: hidden in the compare view from the start.
    QVERIFY(model->setData(model->index(model->rowOf(b), int(RunColumn::Visible)), Qt::Unchecked, Qt::CheckStateRole));
    QVERIFY(w.compareRuns({a, b, c}).isEmpty());
    PlotWidget* loss = w.compare()->plots().front();
    QVERIFY(!w.compare()->isRunVisible(b));
    QVERIFY(hasRunSeries(loss, a) && !hasRunSeries(loss, b) && hasRunSeries(loss, c));

    // Unticked in the table while comparing: gone from every chart at once.
    QVERIFY(model->setData(model->index(model->rowOf(c), int(RunColumn::Visible)), Qt::Unchecked, Qt::CheckStateRole));
    QVERIFY(!w.compare()->isRunVisible(c));
    for (PlotWidget* p : w.compare()->plots()) QVERIFY2(!hasRunSeries(p, c), qPrintable(p->title()));

    // Hidden from the compare view's own list: the table's tick follows.
    w.compare()->setRunVisible(a, false);
    QCOMPARE(tick(a).toInt(), int(Qt::Unchecked));
    w.compare()->setRunVisible(b, true);
    QCOMPARE(tick(b).toInt(), int(Qt::Checked));
    QVERIFY(hasRunSeries(w.compare()->plots().front(), b));
  }

  void theCompareTabFollowsTheSelection() {
    ps::test::TestStore t;
    const qint64 a = t.addRun("a", ps::test::runConfig(0.1), 10);
    const qint64 b = t.addRun("b", ps::test::runConfig(0.2), 10);
    const qint64 c = t.addRun("c", ps::test::runConfig(0.3), 10);
    MainWindow w(options(t));
    auto shown = [&] {
      auto ids = w.compare()->runIds();
      std::sort(ids.begin(), ids.end());
      return ids;
    };
    w.runs()->selectRuns({a, b});  // the live tab is in front: the compare view waits
    QVERIFY(w.compare()->runIds().isEmpty());
    w.tabs()->setCurrentWidget(w.compare());
    QCOMPARE(shown(), (QList<qint64>{a, b}));
    w.runs()->selectRuns({a, b, c});
    QCOMPARE(shown(), (QList<qint64>{a, b, c}));
    w.runs()->selectRuns({c});  // one run is not a comparison: the view keeps what it shows
    QCOMPARE(shown(), (QList<qint64>{a, b, c}));
    // Compare Selected with other runs than the selection shows those runs.
    QVERIFY(w.compareRuns({b, c}).isEmpty());
    QCOMPARE(shown(), (QList<qint64>{b, c}));
  }

  // Two runs alike but for their names go by their names; renaming one renames it in the open compare view.
  void renamingARunRenamesItInTheCompareView() {
    ps::test::TestStore t;
    const qint64 a = t.addRun("first", ps::test::runConfig(0.1), 10);
    const qint64 b = t.addRun("second", ps::test::runConfig(0.1), 10);
    MainWindow w(options(t));
    QVERIFY(w.compareRuns({a, b}).isEmpty());
    PlotWidget* loss = w.compare()->plot(QStringLiteral("Loss"));
    QVERIFY(loss);
    QCOMPARE(loss->legendLabels(),
             (QStringList{QStringLiteral("#%1 first").arg(a), QStringLiteral("#%1 second").arg(b)}));
    RunsModel* model = w.runs()->model();
    QVERIFY(
        model->setData(model->index(model->rowOf(b), int(RunColumn::Name)), QStringLiteral("renamed"), Qt::EditRole));
    loss = w.compare()->plot(QStringLiteral("Loss"));
    QCOMPARE(loss->legendLabels(),
             (QStringList{QStringLiteral("#%1 first").arg(a), QStringLiteral("#%1 renamed").arg(b)}));
  }

  void theFirstWindowTakesMostOfTheScreen() {
    ps::test::TestStore t;
    QSettings().remove("geometry");  // a first launch: nothing saved
    MainWindowOptions o = options(t);
    o.restoreLayout = true;
    MainWindow w(o);
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    QVERIFY2(w.width() >= 0.8 * available.width() && w.height() >= 0.8 * available.height(),
             qPrintable(QStringLiteral("%1x%2 on %3x%4")
                            .arg(w.width())
                            .arg(w.height())
                            .arg(available.width())
                            .arg(available.height())));
    QVERIFY(available.contains(w.geometry()));
  }

  void openRunStoreSwitchesEveryViewAndRefusesWhatIsNotAStore() {
    ps::test::TestStore first, second;
    const qint64 kept = first.addRun("in the first store", ps::test::runConfig(0.1), 10);
    const qint64 also = first.addRun("also first", ps::test::runConfig(0.2), 10);
    second.addRun("in the second store", ps::test::runConfig(0.3), 12);
    MainWindow w(options(first));
    QVERIFY(w.windowTitle().contains("runs.sqlite"));
    QVERIFY(w.openStoredRun(kept).isEmpty());
    QVERIFY(w.compareRuns({kept, also}).isEmpty());
    QCOMPARE(w.runs()->model()->rowCount(), 2);

    const QString secondPath = QString::fromStdString(second.store->path());
    QCOMPARE(w.openStore(secondPath), QString());
    QCOMPARE(w.runs()->model()->rowCount(), 1);
    QCOMPARE(QString::fromStdString(w.runs()->model()->row(0)->info.name), QString("in the second store"));
    QCOMPARE(QString::fromStdString(w.store()->path()), secondPath);
    QCOMPARE(w.bridge()->storePath(), secondPath);  // the next run is recorded there
    QVERIFY(w.storedRunTabs().isEmpty());           // run ids belong to a store: the old tabs go
    QVERIFY(w.compare()->runIds().isEmpty());

    // Not a run store, or no file at all: a clear error, the file untouched, the current store still shown.
    const QString foreign = second.dir.path() + "/notes.sqlite";
    {
      QFile f(foreign);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("these are my notes, not a database\n");
    }
    const QByteArray before = readAll(foreign);
    const QString error = w.openStore(foreign);
    QVERIFY2(error.contains("notes.sqlite") && error.contains(secondPath), qPrintable(error));
    QCOMPARE(readAll(foreign), before);
    QVERIFY2(w.openStore(second.dir.path() + "/missing.sqlite").contains("no run store"),
             qPrintable(w.openStore(second.dir.path() + "/missing.sqlite")));
    QCOMPARE(w.runs()->model()->rowCount(), 1);
    QCOMPARE(QString::fromStdString(w.store()->path()), secondPath);
  }

  // A store opened read-only (--read-only, or one this user cannot write) is viewed, compared and opened run by run;
  // nothing can be started, edited or deleted in it, and the window says so.
  void aReadOnlyStoreIsViewedNotWritten() {
    ps::test::TestStore t;
    const qint64 a = t.addRun("a", ps::test::runConfig(0.1), 10);
    const qint64 b = t.addRun("b", ps::test::runConfig(0.2), 10);
    MainWindowOptions o = options(t);
    o.readOnlyStore = true;
    MainWindow w(o);
    QVERIFY(w.store()->readOnly());
    QVERIFY2(w.windowTitle().contains("(read-only)"), qPrintable(w.windowTitle()));
    RunsModel* model = w.runs()->model();
    QCOMPARE(model->rowCount(), 2);
    QVERIFY(w.compareRuns({a, b}).isEmpty());
    QVERIFY(w.openStoredRun(a).isEmpty());
    const QModelIndex name = model->index(model->rowOf(b), int(RunColumn::Name));
    QVERIFY(!(model->flags(name) & Qt::ItemIsEditable));
    QVERIFY(!model->setData(name, QStringLiteral("renamed"), Qt::EditRole));
    QCOMPARE(t.store->run(b)->name, std::string("b"));
    const QString refused = w.startRun();
    QVERIFY2(refused.contains("read-only") && refused.contains("runs.sqlite"), qPrintable(refused));
    QVERIFY(!w.bridge()->running());
    QVERIFY(w.runs()->deleteRun(a).contains("cannot be written"));
    QVERIFY(t.store->run(a).has_value());
  }

 private:
  static MainWindowOptions options(const ps::test::TestStore& t) {
    MainWindowOptions o;
    o.storePath = QString::fromStdString(t.store->path());
    o.userPresetDir = t.dir.path() + "/user-presets";
    o.restoreLayout = false;
    return o;
  }
};

QTEST_MAIN(SavedRunsTest)
#include "SavedRunsTest.moc"
