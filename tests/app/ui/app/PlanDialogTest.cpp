// Run ▸ Plan for This Network… as a user drives it, offscreen: the dialog opens on the settings in the panel with
// their network, plans the smoke preset for a slow link with progress, shows a setting per link direction and the
// prediction against dense, and Load into Settings puts the plan into the settings panel, ready to start. Planning is
// refused while a run trains and can be cancelled; bad settings are named, not planned.
#include "app/ui/ControlPanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/PlanDialog.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace ps::ui;

class PlanDialogTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("PipeSqueezeTest");
    QCoreApplication::setApplicationName("pipesqueeze-plan-test");
    QVERIFY(dir_.isValid());
  }

  void plansTheSettingsAndLoadsThePlanIntoThePanel() {
    MainWindow w(options());
    QCOMPARE(w.controls()->loadPresetFile(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json"), QString());
    QAction* action = runMenuAction(w, QStringLiteral("Plan for This &Network…"));
    QVERIFY(action);
    QVERIFY(action->isEnabled());
    action->trigger();
    PlanDialog* d = w.findChild<PlanDialog*>();
    QVERIFY(d);
    QVERIFY(d->isVisible());
    QCOMPARE(d->bandwidth()->value(), 100.0);  // the preset's network
    QCOMPARE(d->latency()->value(), 0.5);
    QVERIFY(!d->loadButton()->isEnabled());  // nothing planned yet

    d->bandwidth()->setValue(10);
    d->steps()->setValue(4);
    QSignalSpy done(d, &PlanDialog::planFinished);
    QCOMPARE(d->start(), QString());
    QVERIFY(d->running());
    QVERIFY(!d->start().isEmpty());  // one plan at a time
    QVERIFY2(!w.startRun().isEmpty(), "no training while the planner measures");
    QVERIFY(done.wait(120000));
    QCOMPARE(done.first().at(0).toString(), QStringLiteral("planned"));
    QVERIFY(!d->running());
    QCOMPARE(d->table()->rowCount(), 2);  // 2 stages: boundary 0, both ways
    QCOMPARE(d->table()->item(0, 0)->text(), QStringLiteral("boundary 0 fwd"));
    QVERIFY2(d->table()->item(0, 6)->text() == QStringLiteral("error only"),
             qPrintable(d->table()->item(0, 6)->text()));
    QVERIFY2(d->summaryText().contains(QStringLiteral("× dense")), qPrintable(d->summaryText()));
    QVERIFY2(d->statusText().startsWith(QStringLiteral("Planned in")), qPrintable(d->statusText()));
    const nlohmann::json planned = d->planned();
    ASSERT_PLANNED(planned);
    QCOMPARE(planned["link"]["bandwidth_mbps"].get<double>(), 10.0);

    QVERIFY(d->loadButton()->isEnabled());
    d->loadButton()->click();
    QVERIFY(!d->isVisible());
    const nlohmann::json& now = w.controls()->config();
    QCOMPARE(now["compression"]["boundaries"]["0"]["forward"]["method"],
             planned["compression"]["boundaries"]["0"]["forward"]["method"]);
    QCOMPARE(now["link"]["bandwidth_mbps"].get<double>(), 10.0);
    QCOMPARE(now["run"]["tags"].get<std::string>(), std::string("planned"));
  }

  void cancelStopsPlanningAndKeepsNothing() {
    MainWindow w(options());
    QCOMPARE(w.controls()->loadPresetFile(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json"), QString());
    PlanDialog* d = w.openPlanner();
    QSignalSpy done(d, &PlanDialog::planFinished);
    QCOMPARE(d->start(), QString());
    d->cancel();
    QVERIFY(done.wait(60000));
    QCOMPARE(done.first().at(0).toString(), QStringLiteral("cancelled"));
    QVERIFY(d->planned().is_null());
    QVERIFY(!d->loadButton()->isEnabled());
    QCOMPARE(d->statusText(), QStringLiteral("Planning cancelled."));
  }

  void badSettingsAreNamedAndNotPlanned() {
    std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json");
    nlohmann::json one = nlohmann::json::parse(in);
    one["pipeline"]["stages"] = 1;
    PlanDialog single(one, dir_.filePath(QStringLiteral("none.sqlite")));
    QVERIFY2(single.start().contains(QStringLiteral("one stage")), "a single stage has no link");
    QVERIFY(!single.running());
    nlohmann::json bad = one;
    bad["pipeline"]["stages"] = 2;
    bad["train"]["batch_size"] = -3;
    PlanDialog invalid(bad, dir_.filePath(QStringLiteral("none.sqlite")));
    const QString why = invalid.start();
    QVERIFY2(why.contains(QStringLiteral("batch_size")), qPrintable(why));
    QVERIFY(!invalid.running());
  }

 private:
  static QAction* runMenuAction(MainWindow& w, const QString& text) {
    for (QAction* menu : w.menuBar()->actions())
      if (menu->text() == QStringLiteral("&Run") && menu->menu())
        for (QAction* a : menu->menu()->actions())
          if (a->text() == text) return a;
    return nullptr;
  }
  static void ASSERT_PLANNED(const nlohmann::json& planned) {
    QVERIFY(planned.contains("compression"));
    for (const char* way : {"forward", "backward"})
      QVERIFY2(planned["compression"]["boundaries"]["0"].contains(way), way);
  }

  MainWindowOptions options() {
    MainWindowOptions o;
    o.storePath = dir_.filePath(QStringLiteral("runs-%1.sqlite").arg(++stores_));
    o.userPresetDir = dir_.filePath(QStringLiteral("presets"));
    o.reportDir = dir_.filePath(QStringLiteral("reports"));
    o.openReports = false;
    o.restoreLayout = false;
    return o;
  }

  QTemporaryDir dir_;
  int stores_ = 0;
};

QTEST_MAIN(PlanDialogTest)
#include "PlanDialogTest.moc"
