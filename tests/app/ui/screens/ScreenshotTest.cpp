// Screenshots for people: the main window during a run and the compare view, written as PNGs to the build's
// screenshots/ folder (test output, never committed). Runs under xvfb-run where it is installed, so the window is a
// real X11 window; offscreen otherwise.
#include "app/ui/CompressorEditor.h"
#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/runs/CompareView.h"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QScreen>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <set>

using namespace ps::ui;

namespace {

// Distinct colours in a grid of samples: a blank or single-colour grab has one or two.
int colourVariety(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7)
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  return int(colours.size());
}

MainWindowOptions optionsIn(const QTemporaryDir& dir, const QString& presetPath) {
  MainWindowOptions options;
  options.storePath = dir.filePath("runs.sqlite");
  options.userPresetDir = dir.filePath("presets");
  options.presetPath = presetPath;
  options.restoreLayout = false;
  return options;
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void mainWindowAndCompareView() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json");
    nlohmann::json preset = nlohmann::json::parse(in);
    preset["train"]["epochs"] = 0;
    preset["train"]["max_steps"] = 120;
    preset["eval"]["every_steps"] = 40;
    preset["eval"]["max_batches"] = 2;
    preset["telemetry"]["histogram_every"] = 10;
    const QString presetPath = dir.filePath("shot.json");
    std::ofstream(presetPath.toStdString()) << preset.dump(2);

    MainWindow w(optionsIn(dir, presetPath));
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString out = QStringLiteral(PIPESQUEEZE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(out));

    QList<qint64> ids;
    for (double k : {0.1, 0.02}) {
      w.controls()->loadConfig([&] {
        auto c = w.controls()->config();
        c["compression"]["forward"]["k"] = k;
        c["compression"]["backward"]["k"] = k;
        c["run"]["name"] = "TopK " + std::to_string(int(k * 100)) + "%";
        return c;
      }());
      QSignalSpy ended(w.bridge(), &SessionBridge::runEnded);
      QCOMPARE(w.startRun(), QString());
      if (ids.isEmpty()) {  // the first run: a picture mid-run, after a live change of K
        QTRY_VERIFY_WITH_TIMEOUT(w.live()->lastStep() >= 50, 120000);
        QVERIFY(w.bridge()->set("compression.forward.k", 0.05).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(w.live()->lastStep() >= 80, 120000);
        QTest::qWait(200);  // a few redraws
        const QImage shot = w.grab().toImage();
        QVERIFY(shot.save(out + "/main-window-live.png"));
        QVERIFY2(colourVariety(shot) > 20, "the main window grab looks blank");
      }
      QVERIFY(ended.wait(180000));
      ids << w.bridge()->runId();
    }
    QVERIFY(w.compareRuns(ids).isEmpty());
    QTest::qWait(200);
    const QImage compare = w.grab().toImage();
    QVERIFY(compare.save(out + "/compare-view.png"));
    QVERIFY2(colourVariety(compare) > 20, "the compare view grab looks blank");
    // The first run again, opened from the store in a read-only tab of its own.
    QVERIFY(w.openStoredRun(ids.front()).isEmpty());
    QTest::qWait(200);
    const QImage saved = w.grab().toImage();
    QVERIFY(saved.save(out + "/saved-run.png"));
    QVERIFY2(colourVariety(saved) > 20, "the saved-run tab grab looks blank");
    qInfo("screenshots written to %s", qPrintable(out));
  }

  // The compressor editor is generated from the catalogue: DIANA brings its alpha, PowerSGD its rank slider.
  void compressorEditors() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    MainWindow w(optionsIn(dir, QStringLiteral(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json")));
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString out = QStringLiteral(PIPESQUEEZE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(out));
    CompressorEditor* fwd = w.controls()->forwardEditor();
    fwd->methodBox()->setCurrentText("quantize");
    fwd->feedbackBox()->setCurrentText("diana");
    QVERIFY(fwd->optionShown("alpha"));
    QTest::qWait(100);
    QImage shot = fwd->grab().toImage();
    QVERIFY(shot.save(out + "/compressor-diana.png"));
    QVERIFY2(colourVariety(shot) > 5, "the editor grab looks blank");
    fwd->feedbackBox()->setCurrentText("ef");
    fwd->methodBox()->setCurrentText("powersgd");
    QVERIFY(fwd->optionShown("rank"));
    QTest::qWait(100);
    shot = fwd->grab().toImage();
    QVERIFY(shot.save(out + "/compressor-powersgd.png"));
  }
};

QTEST_MAIN(ScreenshotTest)
#include "ScreenshotTest.moc"
