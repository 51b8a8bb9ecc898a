// Runs ▸ Reproduce… as a user drives it, offscreen: the suites are listed with their claims, the smoke suite runs
// at quick scale with progress, its runs show in the runs table, the report is written with every chart, and a
// second run of the same suite resumes (runs nothing). Cancelling stops the running suite.
#include "app/ui/MainWindow.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/runs/RunsModel.h"
#include "app/ui/runs/RunsPanel.h"
#include "engine/runs/store/RunStore.h"

#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QListWidget>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace ps::ui;

class ReproduceDialogTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("PipeSqueezeTest");
    QCoreApplication::setApplicationName("pipesqueeze-reproduce-test");
    QVERIFY(dir_.isValid());
  }

  void runsTheSmokeSuiteWritesItsReportAndResumes() {
    MainWindow w(options());
    ReproduceDialog* d = w.openReproduce();
    QVERIFY(d->isVisible());
    QVERIFY(d->suites()->count() >= 10);
    const auto smoke = d->suites()->findItems(QStringLiteral("Smoke test"), Qt::MatchStartsWith);
    QCOMPARE(smoke.size(), 1);
    d->suites()->setCurrentItem(smoke.first());
    QCOMPARE(d->seeds()->value(), 2);  // the suite's own seed list
    d->seeds()->setValue(1);
    d->quick()->setChecked(true);

    QSignalSpy done(d, &ReproduceDialog::suiteFinished);
    QSignalSpy runs(d, &ReproduceDialog::runFinished);
    QSignalSpy report(d, &ReproduceDialog::reportWritten);
    QCOMPARE(d->start(), QString());
    QVERIFY(d->running());
    QVERIFY(!d->start().isEmpty());  // one suite at a time
    QVERIFY(done.wait(120000));
    QCOMPARE(done.first().at(0).toString(), QString("finished"));
    QCOMPARE(runs.size(), 3);
    QCOMPARE(report.size(), 1);
    const QString html = report.first().at(0).toString();
    QVERIFY(QFile::exists(html));
    const QDir folder = QFileInfo(html).dir();
    for (const char* f : {"report.md", "charts/curve.png", "charts/pareto.png", "charts/time-to-target.png"})
      QVERIFY2(folder.exists(f), f);
    QCOMPARE(w.runs()->model()->rowCount(), 3);  // the suite's runs are in the runs table

    // A second run of the same suite finds everything done.
    done.clear();
    runs.clear();
    QCOMPARE(d->start(), QString());
    QVERIFY(done.wait(60000));
    QCOMPARE(runs.size(), 0);
    QCOMPARE(w.runs()->model()->rowCount(), 3);
  }

  void cancelStopsTheRunningSuite() {
    MainWindow w(options());
    ReproduceDialog* d = w.openReproduce();
    d->suites()->setCurrentItem(d->suites()->findItems(QStringLiteral("Smoke test"), Qt::MatchStartsWith).first());
    d->quick()->setChecked(false);  // full scale: 60 steps a run, 6 runs
    QSignalSpy done(d, &ReproduceDialog::suiteFinished);
    QSignalSpy runs(d, &ReproduceDialog::runFinished);
    QCOMPARE(d->start(), QString());
    d->cancel();
    QVERIFY(done.wait(60000));
    QCOMPARE(done.first().at(0).toString(), QString("cancelled"));
    QVERIFY(runs.size() <= 1);
    QVERIFY(!d->running());
  }

 private:
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

QTEST_MAIN(ReproduceDialogTest)
#include "ReproduceDialogTest.moc"
