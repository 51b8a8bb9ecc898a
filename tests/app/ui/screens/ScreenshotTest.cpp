// Screenshots for people: the main window during a run and the compare view, written as PNGs to the build's
// screenshots/ folder (test output, never committed). Runs under xvfb-run where it is installed, so the window is a
// real X11 window; offscreen otherwise.
#include "app/ui/CompressorEditor.h"
#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/CompareView.h"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QScreen>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
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

  // Two settings, three seeds each, grouped: a mean line over a min–max band per setting (curves made up here, with
  // a different noise per seed, so that the band has a width to look at).
  void compareViewWithSeedBands() {
    QTemporaryDir dir;
    auto store = std::make_shared<ps::RunStore>(dir.filePath("runs.sqlite").toStdString());
    std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json");
    const nlohmann::json preset = nlohmann::json::parse(in);
    QList<qint64> ids;
    for (double k : {0.1, 0.01})
      for (int seed : {1, 2, 3}) {
        nlohmann::json config = preset;
        config["compression"]["forward"]["k"] = k;
        config["train"]["seed"] = seed;
        const std::string name = "TopK " + std::to_string(int(k * 100)) + "% seed " + std::to_string(seed);
        const qint64 id = store->createRun(name, config.dump(), "screenshot");
        std::vector<ps::MetricPoint> metrics;
        uint32_t noise = 2654435761u * uint32_t(seed + 7);
        for (int step = 1; step <= 400; ++step) {
          noise = noise * 1664525u + 1013904223u;
          const double jitter = (double(noise >> 8) / double(1u << 24) - 0.5) * 0.25;
          const double loss = (k < 0.05 ? 0.75 : 0.45) + 1.8 * std::exp(-step / 90.0) + jitter * (1 + seed) / 3;
          metrics.push_back({step, "train/loss", loss, 0.05 * step, 0.04 * step * (k < 0.05 ? 0.6 : 1.0)});
          metrics.push_back({step, "bytes/wire", 4e5 * k, 0.05 * step, 0.04 * step});
          if (step % 50 == 0)
            metrics.push_back({step, "eval/accuracy",
                               0.88 - (k < 0.05 ? 0.06 : 0) - 0.5 * std::exp(-step / 90.0) + 0.004 * seed, 0.05 * step,
                               0.04 * step});
        }
        store->append(id, metrics, {}, {});
        store->finishRun(id, "finished", "", "{}");
        ids << id;
      }
    CompareView view;
    view.resize(1500, 950);
    view.setRuns(store, ids);
    view.setGroupSeeds(true);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::qWait(200);
    const QImage shot = view.grab().toImage();
    const QString out = QStringLiteral(PIPESQUEEZE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(out));
    QVERIFY(shot.save(out + "/compare-seed-bands.png"));
    QVERIFY2(colourVariety(shot) > 20, "the compare view grab looks blank");
    QVERIFY(view.plot(QStringLiteral("Loss"))->hasSeries(QStringLiteral("group%1/lo").arg(ids[0])));
    QVERIFY(view.plot(QStringLiteral("Loss"))->hasSeries(QStringLiteral("group%1/lo").arg(ids[3])));
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
