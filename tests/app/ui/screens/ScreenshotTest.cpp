// Screenshots for people: the main window during a run and the compare view, written as PNGs to the build's
// screenshots/ folder (test output, never committed). Runs under xvfb-run where it is installed, so the window is a
// real X11 window; offscreen otherwise.
#include "app/ui/CompressorEditor.h"
#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/CompareView.h"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QListWidget>
#include <QPushButton>
#include <QScreen>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <functional>
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

// The 4-stage TopK preset as a short run of `steps` steps (an evaluation at the end, on two batches), written into
// `dir` with `change` applied; returns its path.
QString topKPreset(const QTemporaryDir& dir, int steps, const std::function<void(nlohmann::json&)>& change) {
  std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json");
  nlohmann::json preset = nlohmann::json::parse(in);
  preset["train"]["epochs"] = 0;
  preset["train"]["max_steps"] = steps;
  preset["eval"]["every_steps"] = steps;
  preset["eval"]["max_batches"] = 2;
  change(preset);
  const QString path = dir.filePath("shot.json");
  std::ofstream(path.toStdString()) << preset.dump(2);
  return path;
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void mainWindowAndCompareView() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    const QString presetPath = topKPreset(dir, 120, [](nlohmann::json& preset) {
      preset["eval"]["every_steps"] = 40;
      preset["telemetry"]["histogram_every"] = 10;
    });

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

  // The Timeline tab of a 4-stage TopK run at 100 Mbit/s, as recorded and what if the links were 1 Gbit/s.
  void timelineOfATopKRunAndItsWhatIf() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    const QString presetPath =
        topKPreset(dir, 30, [](nlohmann::json& preset) { preset["link"]["bandwidth_mbps"] = 100; });
    MainWindow w(optionsIn(dir, presetPath));
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString out = QStringLiteral(PIPESQUEEZE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(out));
    QSignalSpy ended(w.bridge(), &SessionBridge::runEnded);
    QCOMPARE(w.startRun(), QString());
    QVERIFY(ended.wait(180000));
    w.live()->views()->setCurrentIndex(1);
    QTRY_COMPARE(w.live()->timeline()->step(), int64_t(30));
    QTest::qWait(200);
    QImage shot = w.grab().toImage();
    QVERIFY(shot.save(out + "/timeline-100mbit.png"));
    QVERIFY2(colourVariety(shot) > 20, "the timeline grab looks blank");
    ps::RetimeNetwork gigabit;
    gigabit.bandwidth_mbps = 1000;
    w.live()->timeline()->setWhatIf(gigabit, 1);
    QVERIFY(w.live()->timeline()->whatIf());
    QVERIFY(w.live()->timeline()->whatIf()->step_s < w.live()->timeline()->recorded()->step_s);
    QTest::qWait(200);
    shot = w.grab().toImage();
    QVERIFY(shot.save(out + "/timeline-whatif-1gbit.png"));
    QVERIFY(w.live()->timeline()->grab().toImage().save(out + "/timeline-view.png"));  // the tab alone, for the docs
    qInfo("%s", qPrintable(w.live()->timeline()->decompositionText()));
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

  // A six-run claim suite (two variants, three seeds), compared on a laptop's and a desktop's screen: seeds
  // apart and grouped, one run alone with its uncompressed evaluation, and the settings panel at the smallest
  // window. Each chart keeps a readable height, and no legend covers a chart.
  void suiteOnLaptopAndDesktopScreens() {
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json");
    const nlohmann::json preset = nlohmann::json::parse(in);
    QList<qint64> ids;
    {
      ps::RunStore store(dir.filePath("runs.sqlite").toStdString());
      const std::string title = "Smoke test: TopK 10% with error feedback keeps accuracy within a point of dense";
      for (int seed : {1, 2, 3})
        for (const std::string variant : {"dense", "topk-ef"}) {
          nlohmann::json config = preset;
          const bool dense = variant == "dense";
          config["compression"]["forward"]["method"] = dense ? "none" : "topk";
          config["train"]["seed"] = seed;
          const qint64 id =
              store.createRun(title + " (" + variant + ", seed " + std::to_string(seed) + ")", config.dump(), "shot",
                              "suite:smoke,variant:" + variant + ",seed:" + std::to_string(seed));
          std::vector<ps::MetricPoint> metrics;
          uint32_t noise = 2654435761u * uint32_t(seed + (dense ? 7 : 13));
          for (int step = 1; step <= 600; ++step) {
            noise = noise * 1664525u + 1013904223u;
            const double jitter = (double(noise >> 8) / double(1u << 24) - 0.5) * 0.3;
            const double loss = (dense ? 0.45 : 0.55) + 1.8 * std::exp(-step / 120.0) + jitter;
            const double wall = 0.05 * step, emulated = 0.04 * step * (dense ? 1.0 : 0.4);
            metrics.push_back({step, "train/loss", loss, wall, emulated});
            metrics.push_back({step, "bytes/wire", dense ? 4e5 : 4e4, wall, emulated});
            if (step % 100 == 0) {
              const double accuracy = (dense ? 0.88 : 0.875) - 0.5 * std::exp(-step / 120.0) + 0.004 * seed;
              metrics.push_back({step, "eval/loss", loss - jitter, wall, emulated});
              metrics.push_back({step, "eval/accuracy", accuracy, wall, emulated});
              if (!dense) {  // the compressed model evaluated without compression: far off, and must stay in view
                metrics.push_back({step, "eval/loss_uncompressed", 7.8 - step / 1000.0, wall, emulated});
                metrics.push_back({step, "eval/accuracy_uncompressed", 0.2, wall, emulated});
              }
            }
          }
          store.append(id, metrics, {}, {});
          store.finishRun(id, "finished", "", "{}");
          ids << id;
        }
    }
    MainWindowOptions options =
        optionsIn(dir, QStringLiteral(PIPESQUEEZE_SOURCE_DIR "/presets/fashion-mnist-topk10.json"));
    options.storePath = dir.filePath("runs.sqlite");
    MainWindow w(options);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString out = QStringLiteral(PIPESQUEEZE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(out));
    const auto shoot = [&](const QString& name) {
      QTest::qWait(150);
      const QImage shot = w.grab().toImage();
      QVERIFY(shot.save(out + "/" + name + ".png"));
      QVERIFY2(colourVariety(shot) > 20, qPrintable(name));
    };
    for (const QSize size : {QSize(1366, 768), QSize(1920, 1080)}) {
      const QString at = QStringLiteral("-%1x%2").arg(size.width()).arg(size.height());
      w.resize(size);
      QVERIFY(w.compareRuns(ids).isEmpty());
      CompareView* compare = w.compare();
      compare->setGroupSeeds(false);
      shoot("suite-compare" + at);
      for (PlotWidget* p : compare->plots()) {
        QVERIFY2(p->height() >= 200, qPrintable(QStringLiteral("%1 is %2 px tall").arg(p->title()).arg(p->height())));
        QVERIFY(p->legendBoxes().empty());  // the view's one legend names the runs
      }
      // The first row of charts is in view whole, the details pane folded on the laptop's screen only.
      const int visible = compare->plots().front()->visibleRegion().boundingRect().height();
      QVERIFY2(visible >= 200, qPrintable(QStringLiteral("%1 px of the first chart in view").arg(visible)));
      QCOMPARE(compare->detailsShown(), size.height() > 1000);
      compare->setGroupSeeds(true);
      shoot("suite-compare-grouped" + at);
      QVERIFY(w.openStoredRun(ids[1]).isEmpty());  // a TopK run: its uncompressed evaluation in view
      shoot("suite-run" + at);
      auto* run = qobject_cast<LivePanel*>(w.tabs()->currentWidget());
      QVERIFY(run);
      for (PlotWidget* p : run->plots())
        if (p->title() == QStringLiteral("Loss")) {
          QVERIFY(p->hasSeries(QStringLiteral("eval/loss_uncompressed")));
          QVERIFY2(p->visibleYRange().second >= 7.2, "the uncompressed evaluation is in view");
        }
      w.tabs()->setCurrentWidget(compare);
    }
    // The claim suites: full titles with their ids, and the verdicts of a report in the dialog.
    ReproduceDialog* reproduce = w.openReproduce();
    reproduce->resize(1280, 720);
    reproduce->suites()->setCurrentItem(
        reproduce->suites()->findItems(QStringLiteral("Smoke test"), Qt::MatchStartsWith).first());
    reproduce->setReportOpener([](const QUrl&) { return false; });  // as here: no browser to start
    reproduce->reportButton()->click();
    QCOMPARE(reproduce->pages()->currentWidget(), reproduce->verdicts());
    QTest::qWait(150);
    const QImage dialog = reproduce->grab().toImage();
    QVERIFY(dialog.save(out + "/reproduce-verdicts.png"));
    QVERIFY2(colourVariety(dialog) > 5, "the Reproduce dialog grab looks blank");
    reproduce->close();

    w.resize(w.minimumSizeHint());
    shoot("settings-smallest-window");
    // The settings keep the width of their controls (they scroll vertically only).
    QWidget* settings = w.controls();
    QVERIFY2(settings->width() >= settings->minimumSizeHint().width() && settings->width() >= 200,
             qPrintable(QString::number(settings->width())));
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
