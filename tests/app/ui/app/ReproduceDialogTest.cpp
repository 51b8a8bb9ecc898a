// Runs ▸ Reproduce… as a user drives it, offscreen: the suites are listed with their claims (the GPU scale offered
// where a suite has one), the smoke suite runs at quick scale with progress, its runs show in the runs table, the
// report is written with every chart, and a second run of the same suite resumes (runs nothing). Cancelling stops the
// running suite.
#include "app/ui/MainWindow.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/runs/RunsModel.h"
#include "app/ui/runs/RunsPanel.h"
#include "engine/runs/store/RunStore.h"

#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
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
    QVERIFY(d->gpu()->isEnabled());  // offered again once the suite is done, as before it ran
    QCOMPARE(report.size(), 1);
    const QString html = report.first().at(0).toString();
    QVERIFY(QFile::exists(html));
    const QDir folder = QFileInfo(html).dir();
    for (const char* f : {"report.md", "charts/curve.png", "charts/pareto.png", "charts/time-to-target.png"})
      QVERIFY2(folder.exists(f), f);
    QCOMPARE(w.runs()->model()->rowCount(), 3);  // the suite's runs are in the runs table
    // The verdicts are in the dialog, one row per rule, in front.
    QCOMPARE(d->pages()->currentWidget(), d->verdicts());
    QVERIFY(d->verdicts()->rowCount() >= 1);
    for (int r = 0; r < d->verdicts()->rowCount(); ++r) {
      QVERIFY(!d->verdicts()->item(r, 0)->text().isEmpty());
      const QString verdict = d->verdicts()->item(r, 1)->text();
      QVERIFY2(verdict == "holds" || verdict == "fails" || verdict == "inconclusive", qPrintable(verdict));
    }
    QVERIFY2(d->statusText().contains(QStringLiteral("Report written")), qPrintable(d->statusText()));

    // A second run of the same suite finds everything done.
    done.clear();
    runs.clear();
    QCOMPARE(d->start(), QString());
    QVERIFY(done.wait(60000));
    QCOMPARE(runs.size(), 0);
    QCOMPARE(w.runs()->model()->rowCount(), 3);
  }

  // Each suite is listed by its full title, wrapped, with its id; choosing one says what Run would do, not "Pick a
  // suite"; a report no browser can show says so in the window and where the verdicts are.
  void suitesAreNamedInFullAndAReportWithoutABrowserSaysWhereToLook() {
    auto store = std::make_shared<ps::RunStore>(dir_.filePath(QStringLiteral("no-browser.sqlite")).toStdString());
    ReproduceDialog d(store, dir_.filePath(QStringLiteral("reports-nb")), true);
    QVERIFY(d.suites()->wordWrap());
    QCOMPARE(d.suites()->textElideMode(), Qt::ElideNone);
    const auto smoke = d.suites()->findItems(QStringLiteral("Smoke test"), Qt::MatchStartsWith);
    QCOMPARE(smoke.size(), 1);
    QVERIFY2(smoke.first()->text().endsWith(QStringLiteral("\nsmoke")), qPrintable(smoke.first()->text()));
    d.suites()->setCurrentItem(smoke.first());
    d.seeds()->setValue(1);
    d.quick()->setChecked(true);
    QVERIFY2(d.statusText().contains(QStringLiteral("smoke: 3 variants × 1 seed(s) = 3 runs at quick scale")),
             qPrintable(d.statusText()));
    // The GPU scale is offered by suites that have one, and says so in the plan; a suite without one unticks it.
    QVERIFY(d.gpu()->isEnabled());
    d.gpu()->setChecked(true);
    QVERIFY2(d.statusText().contains(QStringLiteral("3 runs at GPU, quick scale")), qPrintable(d.statusText()));
    const auto brown = d.suites()->findItems(QStringLiteral("brown-topk"), Qt::MatchEndsWith);
    QCOMPARE(brown.size(), 1);
    d.suites()->setCurrentItem(brown.first());
    QVERIFY(!d.gpu()->isEnabled());
    QVERIFY(!d.gpu()->isChecked());
    d.suites()->setCurrentItem(smoke.first());
    QVERIFY(d.gpu()->isEnabled());
    int asked = 0;
    d.setReportOpener([&](const QUrl& url) {
      ++asked;
      return !url.isLocalFile();  // as on a machine without a browser: nothing opens a file
    });
    d.reportButton()->click();
    QCOMPARE(asked, 1);
    QVERIFY2(d.statusText().contains(QStringLiteral("No web browser could be started")), qPrintable(d.statusText()));
    QVERIFY2(d.statusText().contains(QStringLiteral("Verdicts tab")), qPrintable(d.statusText()));
    QCOMPARE(d.pages()->currentWidget(), d.verdicts());
    QVERIFY(d.verdicts()->rowCount() >= 1);  // no runs yet: each rule inconclusive, and said so
    QCOMPARE(d.verdicts()->item(0, 1)->text(), QStringLiteral("inconclusive"));
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
