// The lab as a user drives it, offscreen: pick a preset, move the K slider, start, watch every chart fill, change
// the compressor mid-run (marker on every chart + the engine's new setting), pause, stop, find the run in the
// table, compare two runs, export PNG and CSV.
#include "app/ui/CompressorEditor.h"
#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/PresetLibrary.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/SliderScales.h"
#include "app/ui/charts/HeatmapWidget.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/RunExports.h"
#include "app/ui/runs/RunsModel.h"
#include "app/ui/runs/RunsPanel.h"
#include "app/ui/runs/TargetTable.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>

#include <fstream>
#include <memory>

using namespace ps::ui;

namespace {

// The smoke preset made long enough to change things while it runs, with TopK forward.
QString writeLongSmokePreset(const QString& dir) {
  std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["train"]["max_steps"] = 100000;
  j["run"]["name"] = "gui test";
  j["eval"]["every_steps"] = 10;
  j["telemetry"]["histogram_every"] = 5;
  const QString path = dir + "/long-smoke.json";
  std::ofstream(path.toStdString()) << j.dump(2);
  return path;
}

int rowOfRun(RunsPanel* panel, qint64 id) {
  return panel->model()->rowOf(id);
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings and user presets go to a throwaway place
    QCoreApplication::setOrganizationName("PipeSqueezeTest");
    QCoreApplication::setApplicationName("pipesqueeze-test");
    QVERIFY(dir_.isValid());
  }

  void sliderScalesAreLogarithmicAndRoundTrip() {
    QCOMPARE(kFromSlider(0), 0.001);
    QCOMPARE(kFromSlider(kSliderSteps), 1.0);
    QCOMPARE(kFromSlider(kSliderSteps / 3), 0.01);
    QCOMPARE(kFromSlider(2 * kSliderSteps / 3), 0.1);
    QCOMPARE(kFromSlider(sliderFromK(0.3)), 0.3);
    QCOMPARE(kFromSlider(sliderFromK(0.05)), 0.05);
    QCOMPARE(kFromSlider(sliderFromK(0.012)), 0.012);
    for (int i = 1; i <= kSliderSteps; ++i) {  // increasing, no step more than a factor of 1.34
      QVERIFY(kFromSlider(i) > kFromSlider(i - 1));
      QVERIFY(kFromSlider(i) / kFromSlider(i - 1) < 1.34);
    }
    for (int i = 0; i <= kSliderSteps; ++i) QCOMPARE(sliderFromK(kFromSlider(i)), i);
    QCOMPARE(bitsFromSlider(1), 1);
    QCOMPARE(bitsFromSlider(8), 8);
    QCOMPARE(bitsFromSlider(kBitsPositions), 16);
    QCOMPARE(sliderFromBits(16), kBitsPositions);
    QCOMPARE(sliderFromBits(4), 4);
  }

  void opensOnTheDefaultPresetReadyToStart() {
    MainWindow w(options());
    QCOMPARE(QString::fromStdString(w.controls()->config()["task"].get<std::string>()), QString("fashion_mnist"));
    QCOMPARE(w.controls()->presetPath(), PresetLibrary::defaultPresetPath());
    QVERIFY(!w.bridge()->running());
  }

  // The wheel over a settings input that has no focus scrolls the panel and leaves the setting alone; once the input
  // has focus, the wheel is its.
  void theWheelScrollsTheSettingsNotTheirInputs() {
    MainWindow w(options());
    w.resize(1000, 500);  // short: the settings panel scrolls
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSpinBox* box = w.controls()->microbatchesBox();
    auto* area = qobject_cast<QScrollArea*>(w.controls()->findChild<QScrollArea*>());
    QVERIFY(area && area->verticalScrollBar()->maximum() > 0);
    const int before = box->value(), scrolled = area->verticalScrollBar()->value();
    const QPoint at = box->rect().center();
    auto wheel = [&] {
      QWheelEvent down(at, box->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                       Qt::NoScrollPhase, false);
      QApplication::sendEvent(box, &down);
    };
    QVERIFY(!box->hasFocus());
    wheel();
    QCOMPARE(box->value(), before);
    QVERIFY(area->verticalScrollBar()->value() > scrolled);
    QCOMPARE(box->focusPolicy(), Qt::StrongFocus);  // the wheel does not take focus either
    box->setFocus();
    QTRY_VERIFY(box->hasFocus());
    wheel();
    QVERIFY(box->value() != before);
    // Start: the focused input is disabled, and focus does not move on to one that stays editable (the learning rate).
    w.controls()->presetBox()->setFocus();
    QTRY_VERIFY(w.controls()->presetBox()->hasFocus());
    w.controls()->setRunning(true);
    QVERIFY(!w.controls()->isAncestorOf(QApplication::focusWidget()));
    w.controls()->setRunning(false);
  }

  // Edited settings mark the picker "(modified)"; choosing another preset then asks first, and a refusal keeps both
  // the settings and the picker as they were.
  void switchingPresetsWithEditedSettingsAsksFirst() {
    MainWindow w(options());
    ControlPanel* panel = w.controls();
    QComboBox* picker = panel->presetBox();
    QVERIFY(picker->count() >= 2);
    const QString loaded = picker->currentText();
    QVERIFY(!panel->modified() && !loaded.contains(QStringLiteral("(modified)")));
    QString asked;
    bool discard = false;
    panel->setConfirmDiscard([&](const QString& preset) {
      asked = preset;
      return discard;
    });
    const int micro = panel->microbatchesBox()->value();
    panel->microbatchesBox()->setValue(micro == 2 ? 3 : 2);
    QVERIFY(panel->modified());
    QCOMPARE(picker->currentText(), loaded + QStringLiteral(" (modified)"));

    const int here = picker->currentIndex(), other = here == 0 ? 1 : 0;
    const auto edited = panel->config();
    Q_EMIT picker->activated(other);
    QCOMPARE(asked, picker->itemData(other, Qt::UserRole + 1).toString());
    QCOMPARE(panel->config(), edited);
    QCOMPARE(picker->currentIndex(), here);
    QCOMPARE(picker->currentText(), loaded + QStringLiteral(" (modified)"));

    discard = true;
    picker->setCurrentIndex(other);
    Q_EMIT picker->activated(other);
    QVERIFY(!panel->modified());
    QCOMPARE(picker->currentIndex(), other);
    QVERIFY(!picker->currentText().contains(QStringLiteral("(modified)")));
    QCOMPARE(picker->itemText(here), loaded);  // the mark went with the edits
  }

  // A paused run says so in the status bar until it resumes.
  void aPausedRunSaysSoUntilResumed() {
    MainWindow w(options());
    ps::EventRecord pause;
    pause.step = 12;
    pause.kind = ps::eventName(ps::EventKind::Pause);
    Q_EMIT w.bridge()->eventArrived(pause);
    QVERIFY2(w.runState().contains(QStringLiteral("paused at step 12")), qPrintable(w.runState()));
    ps::EventRecord resume = pause;
    resume.kind = ps::eventName(ps::EventKind::Resume);
    Q_EMIT w.bridge()->eventArrived(resume);
    QVERIFY2(w.runState().contains(QStringLiteral("resumed at step 12")), qPrintable(w.runState()));
  }

  // Impossible settings cannot be typed: the stages box stops at the model's blocks and the micro-batches box at a
  // replica's share of the batch, and each says why; what the boxes cannot hold back is explained in the panel's
  // words, naming its controls and saying which keys come from the preset.
  void impossibleSettingsAreCaughtWhereTheyAreTyped() {
    MainWindow w(options());
    ControlPanel* panel = w.controls();
    auto config = panel->config();
    config["task"] = "synthetic";
    config["model"]["depth"] = 3;
    config["pipeline"]["stages"] = 2;
    config["pipeline"]["microbatches"] = 2;
    config["train"]["batch_size"] = 12;
    config["parallel"]["replicas"] = 1;
    panel->loadConfig(ps::Config::fromJson(config).json);
    QCOMPARE(panel->stagesBox()->maximum(), 4);  // three layers and a head
    QVERIFY2(panel->stagesBox()->toolTip().contains(QStringLiteral("has 4 blocks")),
             qPrintable(panel->stagesBox()->toolTip()));
    QCOMPARE(panel->microbatchesBox()->maximum(), 12);
    panel->stagesBox()->setValue(50);
    QCOMPARE(panel->stagesBox()->value(), 4);
    QCOMPARE(panel->config()["pipeline"]["stages"], 4);

    QSignalSpy errors(panel, &ControlPanel::errorOccurred);
    panel->replicasBox()->setValue(5);  // 12 samples do not split over 5 replicas
    QCOMPARE(errors.count(), 1);
    const QString error = errors.first().at(0).toString();
    QVERIFY2(error.contains(QStringLiteral("“Replicas” (parallel.replicas)")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("train.batch_size has no control in this panel")), qPrintable(error));
    QVERIFY2(!error.startsWith(QStringLiteral("the settings panel")), qPrintable(error));
    QCOMPARE(panel->config()["parallel"]["replicas"], 1);  // the last valid settings stay
    panel->replicasBox()->setValue(3);
    QCOMPARE(panel->microbatchesBox()->maximum(), 4);  // 12 over 3 replicas
    QCOMPARE(panel->controlName(QStringLiteral("compression.forward.k")), QStringLiteral("Forward activations ▸ K"));
  }

  // Reports, presets and the default run store live in one data folder, the CLI's.
  void reportsPresetsAndRunsShareOneDataFolder() {
    const QByteArray store = qgetenv("PIPESQUEEZE_STORE");
    qunsetenv("PIPESQUEEZE_STORE");
    const QString data = QFileInfo(QString::fromStdString(ps::RunStore::defaultPath())).absolutePath();
    if (!store.isEmpty()) qputenv("PIPESQUEEZE_STORE", store);
    QCOMPARE(QFileInfo(MainWindow::defaultReportDir()).absolutePath(), data);
    QCOMPARE(QFileInfo(ps::ui::PresetLibrary().userDir()).absolutePath(), data);
    QVERIFY(MainWindow::defaultReportDir().endsWith(QStringLiteral("/reports")));
  }

  // A saved preset is picked at once, unmodified; a second save under its name is refused unless replacing.
  void aSavedPresetIsPicked() {
    MainWindow w(options());
    ControlPanel* panel = w.controls();
    const int micro = panel->microbatchesBox()->value();
    panel->microbatchesBox()->setValue(micro == 2 ? 3 : 2);
    QVERIFY(panel->modified());
    const auto edited = panel->config();
    QCOMPARE(w.savePreset(QStringLiteral("my-four-stage"), false), QString());
    QCOMPARE(panel->presetBox()->currentText(), QStringLiteral("my-four-stage (mine)"));
    QVERIFY(!panel->modified());
    QCOMPARE(panel->config(), edited);
    QVERIFY(w.savePreset(QStringLiteral("my-four-stage"), false).contains(QStringLiteral("exists already")));
    QCOMPARE(w.savePreset(QStringLiteral("my-four-stage"), true), QString());
  }

  // While an evaluation runs, the status says which pass and how far it is.
  void anEvaluationSaysHowFarItIs() {
    MainWindow w(options());
    ps::ProgressRecord p;
    p.step = 40, p.done = 3, p.total = 20;
    Q_EMIT w.bridge()->progressArrived(p);
    QVERIFY2(w.runState().contains(QStringLiteral("evaluating through the codecs · 3 of 20 batches")),
             qPrintable(w.runState()));
    p.compressed = false, p.done = 20;
    Q_EMIT w.bridge()->progressArrived(p);
    QVERIFY2(w.runState().contains(QStringLiteral("evaluating uncompressed · 20 of 20")), qPrintable(w.runState()));
  }

  // From Start until the store has the run's record, the table shows it as starting; a start that fails takes the
  // row away and leaves the last run's charts as they were.
  void aStartingRunIsListedAndAFailedOneKeepsTheCharts() {
    MainWindow w(options());
    ps::StepRecord step;
    step.step = 7, step.loss = 1.5;
    Q_EMIT w.bridge()->stepArrived(step);
    w.live()->flush();
    QCOMPARE(w.live()->lastStep(), int64_t(7));
    const int before = w.runs()->model()->rowCount();

    auto config = w.controls()->config();
    config["data"]["root"] = (dir_.path() + "/no-such-data").toStdString();
    config["run"]["name"] = "about to fail";
    w.controls()->loadConfig(config);
    QSignalSpy failed(w.bridge(), &SessionBridge::startFailed);
    QCOMPARE(w.startRun(), QString());
    RunsModel* model = w.runs()->model();
    QCOMPARE(model->rowCount(), before + 1);
    QCOMPARE(model->runId(0), qint64(0));
    QCOMPARE(model->index(0, int(RunColumn::Status)).data().toString(), QStringLiteral("starting"));
    QVERIFY2(model->index(0, int(RunColumn::Name)).data().toString().startsWith(QStringLiteral("about to fail")),
             qPrintable(model->index(0, int(RunColumn::Name)).data().toString()));
    QVERIFY(!(model->flags(model->index(0, int(RunColumn::Visible))) & Qt::ItemIsUserCheckable));
    QVERIFY(!model->visibleIds().contains(0));
    model->refresh();  // the periodic refresh keeps it
    QCOMPARE(model->runId(0), qint64(0));

    QVERIFY(failed.wait(60000));
    QCOMPARE(model->rowCount(), before);
    QVERIFY(before == 0 || model->runId(0) != 0);
    QCOMPARE(w.live()->lastStep(), int64_t(7));
    QVERIFY2(w.runState().contains(QStringLiteral("could not start")), qPrintable(w.runState()));
  }

  void badPresetGivesAnErrorAndKeepsTheSettings() {
    MainWindow w(options());
    const auto before = w.controls()->config();
    const QString error = w.openPreset(dir_.path() + "/missing.json");
    QVERIFY2(error.contains("missing.json"), qPrintable(error));
    QCOMPARE(w.controls()->config(), before);
    QVERIFY(w.openPreset(QString()).contains("preset"));
  }

  void aFailedStartUnlocksTheSettingsAndSaysWhy() {
    MainWindow w(options());
    auto config = w.controls()->config();
    config["data"]["root"] = (dir_.path() + "/no-such-data").toStdString();
    w.controls()->loadConfig(config);
    QSignalSpy failed(w.bridge(), &SessionBridge::startFailed);
    QCOMPARE(w.startRun(), QString());  // valid settings: the data problem shows while preparing
    QVERIFY(failed.wait(60000));
    QVERIFY2(failed.first().at(0).toString().contains("no-such-data"), qPrintable(failed.first().at(0).toString()));
    QVERIFY(w.controls()->presetBox()->isEnabled());
    QVERIFY(!w.bridge()->running());
  }

  // A preset's name and tags describe the preset: changing its compression in the panel makes a run named after the
  // change and tagged "modified"; a setting that does not change training leaves them.
  void aChangedPresetIsNotRecordedUnderThePresetsLabels() {
    MainWindow w(options());
    const nlohmann::json loaded = w.controls()->config();
    QCOMPARE(w.controls()->runConfig(), loaded);
    w.controls()->latencyBox()->setValue(loaded["link"].value("latency_ms", 0.0) + 1);
    CompressorEditor* fwd = w.controls()->forwardEditor();
    fwd->methodBox()->setCurrentText(loaded["compression"]["forward"]["method"] == "topk" ? "quantize" : "topk");
    const nlohmann::json run = w.controls()->runConfig();
    QCOMPARE(run["run"]["tags"], nlohmann::json("modified"));
    const std::string name = run["run"]["name"];
    QVERIFY2(name.find("compression.forward.method=") != std::string::npos, name.c_str());
    QVERIFY2(name.find("link.latency_ms=") != std::string::npos, name.c_str());
    QCOMPARE(w.controls()->config()["run"], loaded["run"]);  // the panel keeps the preset's labels for saving
  }

  // K can be typed: any percentage goes into the settings as a fraction, the slider follows to its nearest
  // position, and the slider's moves show in the field.
  void kCanBeTypedBesideItsSlider() {
    MainWindow w(options());
    CompressorEditor* fwd = w.controls()->forwardEditor();
    fwd->methodBox()->setCurrentText("topk");
    QDoubleSpinBox* field = fwd->kField();
    QVERIFY(field);
    QSignalSpy changed(fwd, &CompressorEditor::changed);
    field->setValue(0.37);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).toString(), QString("compression.forward.k"));
    QVERIFY(std::abs(changed.first().at(1).toDouble() - 0.0037) < 1e-9);
    QVERIFY(std::abs(w.controls()->config()["compression"]["forward"]["k"].get<double>() - 0.0037) < 1e-9);
    QCOMPARE(fwd->kSlider()->value(), ps::ui::sliderFromK(0.0037));
    fwd->kSlider()->setValue(ps::ui::sliderFromK(0.05));
    QVERIFY(std::abs(field->value() - 5.0) < 1e-9);
    // Loading settings shows the exact K, not the slider's nearest step.
    auto config = w.controls()->config();
    config["compression"]["forward"]["k"] = 0.0123;
    w.controls()->loadConfig(config);
    QVERIFY(std::abs(field->value() - 1.23) < 1e-9);
  }

  void aClickOnASliderWithoutMovingChangesNothing() {
    MainWindow w(options());
    CompressorEditor* fwd = w.controls()->forwardEditor();
    fwd->methodBox()->setCurrentText("topk");
    QSignalSpy changed(fwd, &CompressorEditor::changed);
    Q_EMIT fwd->kSlider()->sliderPressed();
    Q_EMIT fwd->kSlider()->sliderReleased();
    QCOMPARE(changed.count(), 0);
    // Keyboard or programmatic moves are changes.
    fwd->kSlider()->setValue(fwd->kSlider()->value() - 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).toString(), QString("compression.forward.k"));
    // Adaptive K is offered for sparsifiers and lands in the settings.
    QVERIFY(fwd->adaptBox()->isEnabled());
    fwd->adaptBox()->setCurrentText("gravac");
    QCOMPARE(w.controls()->config()["compression"]["forward"]["adapt"], "gravac");
    fwd->methodBox()->setCurrentText("quantize");  // not a sparsifier: refused with the reason, settings kept
    QCOMPARE(w.controls()->config()["compression"]["forward"]["method"], "topk");
    QVERIFY(!fwd->adaptBox()->isEnabled() || fwd->methodBox()->currentText() == "topk");
  }

  // The editor is generated from the compression catalogue: every option of the chosen codec, compensation and
  // controller has its control, with its range, and an edit lands in the settings under its own key.
  void theCompressorEditorShowsWhatTheChosenMethodsRead() {
    MainWindow w(options());
    CompressorEditor* fwd = w.controls()->forwardEditor();
    for (const auto& spec : ps::catalogue::options()) QVERIFY2(fwd->optionControl(spec.name), spec.name.c_str());
    fwd->methodBox()->setCurrentText("quantize");
    QVERIFY(fwd->optionShown("bits") && fwd->optionShown("scale") && fwd->optionShown("rounding"));
    QVERIFY(!fwd->optionShown("k") && !fwd->optionShown("alpha"));
    fwd->methodBox()->setCurrentText("topk");
    QVERIFY(fwd->optionShown("k") && fwd->optionShown("value_bits") && !fwd->optionShown("bits"));
    // A sparsifier's rounding, range and bucket act only when its value bits quantize the kept values again.
    QVERIFY(!fwd->optionShown("rounding") && !fwd->optionShown("range") && !fwd->optionShown("bucket"));
    QWidget* valueBits = fwd->optionControl("value_bits");
    if (auto* slider = qobject_cast<QSlider*>(valueBits)) {
      slider->setValue(slider->minimum());  // the fewest bits
      Q_EMIT slider->sliderReleased();
    } else {
      qobject_cast<QSpinBox*>(valueBits)->setValue(4);
    }
    QVERIFY(fwd->optionShown("rounding") && fwd->optionShown("range") && fwd->optionShown("bucket"));
    fwd->feedbackBox()->setCurrentText("diana");
    QVERIFY(fwd->optionShown("alpha") && !fwd->optionShown("p"));
    auto* alpha = qobject_cast<QDoubleSpinBox*>(fwd->optionControl("alpha"));
    QVERIFY(alpha);
    QCOMPARE(alpha->maximum(), 1.0);
    alpha->setValue(0.25);
    QCOMPARE(w.controls()->config()["compression"]["forward"]["alpha"].get<double>(), 0.25);
    fwd->feedbackBox()->setCurrentText("randdiana");
    QVERIFY(fwd->optionShown("alpha") && fwd->optionShown("p"));
    auto* bucket = qobject_cast<QSpinBox*>(fwd->optionControl("bucket"));
    QVERIFY(bucket);
    QCOMPARE(bucket->minimum(), 8);
    // A codec added to the catalogue brings its controls: PowerSGD's rank is a slider over 1..64.
    fwd->feedbackBox()->setCurrentText("ef");
    fwd->methodBox()->setCurrentText("powersgd");
    QVERIFY(fwd->optionShown("rank") && fwd->optionShown("min_size") && !fwd->optionShown("k"));
    auto* rank = qobject_cast<QSlider*>(fwd->optionControl("rank"));
    QVERIFY(rank);
    QCOMPARE(rank->minimum(), 1);
    QCOMPARE(rank->maximum(), 64);
    rank->setValue(8);
    QCOMPARE(w.controls()->config()["compression"]["forward"]["rank"].get<int>(), 8);
    // AQ-SGD keeps per-sample activations: it is offered for the forward direction only.
    QVERIFY(fwd->feedbackBox()->findText("aqsgd") >= 0);
    QCOMPARE(w.controls()->backwardEditor()->feedbackBox()->findText("aqsgd"), -1);
    // The learned bottleneck brings its width and start; it is layers around a boundary, offered for the forward
    // direction only (what goes back is the gradient of its code).
    fwd->feedbackBox()->setCurrentText("none");
    fwd->methodBox()->setCurrentText("bottleneck");
    QVERIFY(fwd->optionShown("code_width") && fwd->optionShown("code_init") && fwd->optionShown("value_bits"));
    QVERIFY(!fwd->optionShown("rank") && !fwd->optionShown("k"));
    QCOMPARE(w.controls()->backwardEditor()->methodBox()->findText("bottleneck"), -1);
    QCOMPARE(w.controls()->gradientsEditor()->methodBox()->findText("bottleneck"), -1);
  }

  void savedPresetsAreListedAndNeverOverwrittenSilently() {
    PresetLibrary library(dir_.path() + "/user-presets");
    nlohmann::json bad = {{"pipeline", {{"stages", 99}}}};
    QVERIFY(library.save("bad", bad).contains("pipeline.stages"));
    MainWindow w(options());
    QVERIFY(library.save("mine", w.controls()->config()).isEmpty());
    QVERIFY(library.save("mine", w.controls()->config()).contains("exists already"));
    bool found = false;
    for (const auto& e : library.list()) found |= e.user && e.name == "mine";
    QVERIFY(found);
  }

  // The app saves into the user preset folder the CLI searches first; presets saved by earlier versions in Qt's
  // own data folder are still listed.
  void theAppSavesPresetsWhereTheCliFindsThem() {
    const QByteArray before = qgetenv("XDG_DATA_HOME");
    const QString xdg = dir_.path() + "/xdg";
    qputenv("XDG_DATA_HOME", xdg.toUtf8());
    const QString earlier = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/presets";
    QVERIFY(QDir().mkpath(earlier));
    QFile::copy(QString::fromStdString(ps::resolvePreset("smoke")), earlier + "/from-before.json");

    PresetLibrary library;
    QCOMPARE(library.userDir(), xdg + "/pipesqueeze/presets");
    QVERIFY(library.save("shared", ps::Config::defaults().json).isEmpty());
    QCOMPARE(QString::fromStdString(ps::resolvePreset("shared")), library.pathFor("shared"));
    QStringList mine;
    for (const auto& e : library.list())
      if (e.user) mine << e.name;
    QCOMPARE(mine, (QStringList{"shared", "from-before"}));
    if (before.isNull()) qunsetenv("XDG_DATA_HOME");
    else qputenv("XDG_DATA_HOME", before);
  }

  void trainChangeStopCompareExport() {
    MainWindow w(options());
    const QString preset = writeLongSmokePreset(dir_.path());
    QVERIFY(w.openPreset(preset).isEmpty());
    // Pick a bundled preset through the picker, then the long one again.
    QComboBox* picker = w.controls()->presetBox();
    const int smoke = picker->findText("smoke");
    QVERIFY(smoke >= 0);
    picker->setCurrentIndex(smoke);
    Q_EMIT picker->activated(smoke);
    QCOMPARE(w.controls()->config()["train"]["max_steps"], 60);
    QVERIFY(w.openPreset(preset).isEmpty());

    CompressorEditor* fwd = w.controls()->forwardEditor();
    fwd->methodBox()->setCurrentText("topk");
    fwd->kSlider()->setValue(sliderFromK(0.1));
    QCOMPARE(w.controls()->config()["compression"]["forward"]["k"].get<double>(), 0.1);

    const qint64 first = runUntil(w, 25);
    QVERIFY(w.live()->linkMethods().at("link0/fwd").find("topk") != std::string::npos);
    w.live()->flush();
    for (PlotWidget* p : w.live()->plots()) QVERIFY2(p->pointCount() > 0, qPrintable(p->title()));
    QCOMPARE(int(w.live()->heatmaps().size()), 2);
    for (HeatmapWidget* h : w.live()->heatmaps()) QVERIFY2(h->columnCount() > 0, qPrintable(h->title()));

    // Mid-run change: the slider goes to 2%; the session applies it at the next step.
    fwd->kSlider()->setValue(sliderFromK(0.02));
    QTRY_VERIFY_WITH_TIMEOUT(w.bridge()->config()["compression"]["forward"]["k"].get<double>() == 0.02, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(w.live()->linkMethods().at("link0/fwd").find("topk 2%") != std::string::npos, 20000);
    w.live()->flush();
    for (PlotWidget* p : w.live()->plots()) {
      bool marked = false;
      for (const Marker& m : p->markers()) marked |= m.label == "fwd k = 2 %";
      QVERIFY2(marked, qPrintable(p->title()));
    }
    // A key that shapes the model cannot change mid-run: its widget is disabled; a link's can, and stays editable.
    QVERIFY(!w.controls()->presetBox()->isEnabled());
    QVERIFY(!w.controls()->replicasBox()->isEnabled());
    QVERIFY(w.controls()->latencyBox()->isEnabled());

    w.pauseRun();
    QTRY_VERIFY_WITH_TIMEOUT(w.bridge()->paused(), 20000);
    const int64_t pausedAt = w.live()->lastStep();
    QTest::qWait(300);
    QCOMPARE(w.live()->lastStep(), pausedAt);
    w.resumeRun();
    QTRY_VERIFY_WITH_TIMEOUT(w.live()->lastStep() > pausedAt + 2, 20000);
    stop(w);
    const int row = rowOfRun(w.runs(), first);
    QVERIFY(row >= 0);
    QCOMPARE(w.store()->run(first)->status, std::string("stopped"));

    // Opened from the store, the run shows what the live view showed at its end: point for point, marker for marker.
    QVERIFY(w.openStoredRun(first).isEmpty());
    LivePanel* saved = w.storedRunTabs().front();
    const auto livePlots = w.live()->plots(), savedPlots = saved->plots();
    QCOMPARE(savedPlots.size(), livePlots.size());
    for (size_t i = 0; i < livePlots.size(); ++i) {
      QCOMPARE(savedPlots[i]->title(), livePlots[i]->title());
      QVERIFY2(livePlots[i]->pointCount() > 0, qPrintable(livePlots[i]->title()));
      QCOMPARE(savedPlots[i]->pointCount(), livePlots[i]->pointCount());
      QCOMPARE(savedPlots[i]->markers().size(), livePlots[i]->markers().size());
    }
    for (size_t s = 0; s < w.live()->heatmaps().size(); ++s)
      QCOMPARE(saved->heatmaps()[s]->columnCount(), w.live()->heatmaps()[s]->columnCount());

    // A second run with another K, then compare the two.
    fwd->kSlider()->setValue(sliderFromK(0.3));
    const qint64 second = runUntil(w, 15);
    stop(w);
    QVERIFY(second != first);
    QVERIFY(!w.compareRuns({first}).isEmpty());  // one run is not a comparison
    QVERIFY(w.compareRuns({first, second}).isEmpty());
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.compare()));
    QVERIFY(w.compare()->diffRowCount() >= 1);
    int plotted = 0;
    for (PlotWidget* p : w.compare()->plots()) plotted += p->pointCount() > 0;
    QVERIFY(plotted >= 3);

    // Exports: PNGs of the live and compare charts, CSV of a run and of the visible range, replayable config.
    QDir out(dir_.path() + "/export");
    QVERIFY(out.mkpath("."));
    const int livePngs = w.live()->exportPng(out.filePath("live"));
    QCOMPARE(livePngs, int(w.live()->plots().size() + w.live()->heatmaps().size()));
    QVERIFY(w.compare()->exportAllPng(out.filePath("compare")) >= 3);
    for (const QFileInfo& f : QDir(out.filePath("live")).entryInfoList({"*.png"})) QVERIFY(f.size() > 1000);
    QVERIFY(exportRunCsv(*w.store(), first, out.filePath("run.csv")).isEmpty());
    QFile csv(out.filePath("run.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readLine().startsWith("step,wall_s,emulated_s"));
    QVERIFY(w.compare()->exportVisibleCsv(out.filePath("visible.csv")).isEmpty());
    QVERIFY(QFileInfo(out.filePath("visible.csv")).size() > 100);
    // The network the compare view re-times for, and its target, are what the runs table's time to target reads.
    ps::RetimeNetwork slow;
    slow.bandwidth_mbps = 0.5;
    slow.latency_ms = 5;
    w.compare()->setNetwork(slow);
    QCOMPARE(w.runs()->model()->timeTarget().network.bandwidth_mbps.value_or(0), 0.5);
    w.compare()->targetTable()->setTarget(10);
    QCOMPARE(w.runs()->model()->timeTarget().accuracy, 0.1);
    w.compare()->setNetwork({});
    QVERIFY(!w.runs()->model()->timeTarget().network.bandwidth_mbps);
    QVERIFY(exportRunConfig(*w.store(), second, out.filePath("config.json")).isEmpty());
    QVERIFY(w.openPreset(out.filePath("config.json")).isEmpty());  // the app replays it
    QCOMPARE(w.controls()->config()["compression"]["forward"]["k"].get<double>(), 0.3);
  }

  // The app starts a local multi-process run (2 stages x 2 replicas: this window is rank 0, three
  // pipesqueeze-cli processes the others), shows every rank's telemetry live, changes the replicas' gradient
  // compressor mid-run on every rank, and stops them all.
  void multiProcessRunWithReplicas() {
    MainWindow w(options());
    QVERIFY(w.openPreset(writeLongSmokePreset(dir_.path())).isEmpty());
    w.controls()->replicasBox()->setValue(2);
    QCOMPARE(w.controls()->config()["parallel"]["replicas"], 2);
    CompressorEditor* grads = w.controls()->gradientsEditor();
    QVERIFY(grads->isVisibleTo(w.controls()));
    grads->methodBox()->setCurrentText("topk");
    grads->kSlider()->setValue(sliderFromK(0.1));
    QCOMPARE(w.controls()->config()["compression"]["gradients"]["k"].get<double>(), 0.1);

    const qint64 id = runUntil(w, 10);
    const auto& methods = w.live()->linkMethods();
    QVERIFY(methods.count("link0/grad") && methods.count("link1/grad") && methods.count("link0/fwd"));
    QVERIFY(methods.at("link1/grad").find("topk 10%") != std::string::npos);
    grads->kSlider()->setValue(sliderFromK(0.02));
    QTRY_VERIFY_WITH_TIMEOUT(w.live()->linkMethods().at("link1/grad").find("topk 2%") != std::string::npos, 30000);
    stop(w);
    auto run = w.store()->run(id);
    QVERIFY(run.has_value());
    QCOMPARE(run->status, std::string("stopped"));
    // Every rank's traffic reached rank 0's store: both stages' exchanges, every step.
    const auto steps = w.store()->metrics(id, "train/loss").size();
    QVERIFY(steps >= 10);
    QCOMPARE(w.store()->metrics(id, "link1/grad/wire_bytes").size(), steps);
    bool marked = false;
    for (const auto& e : w.store()->events(id))
      marked |= e.kind == "setting" && e.detail_json.find("gradients.k") != std::string::npos;
    QVERIFY(marked);
  }

  void closingDuringAHungMultiProcessRunDoesNotWaitForTheTimeout() {
    // Rank 1 of three processes stops itself at step 5 (SIGSTOP), so rank 0 waits on it; closing the window then
    // destroys the bridge, which must end the run in seconds, not after parallel.timeout_s = 120 s.
    std::ifstream in(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["train"]["max_steps"] = 100000;
    j["pipeline"]["stages"] = 3;
    j["parallel"]["mode"] = "processes";
    j["parallel"]["timeout_s"] = 120;
    qputenv("PIPESQUEEZE_FAULT", "1:5:hang");  // read by the ranks the session launches, not by this process
    auto bridge = std::make_unique<SessionBridge>(dir_.path() + "/hung.sqlite");
    QSignalSpy started(bridge.get(), &SessionBridge::runStarted);
    QSignalSpy steps(bridge.get(), &SessionBridge::stepArrived);
    const QString error = bridge->start(j);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(started.wait(60000));  // the ranks are launched by now
    qunsetenv("PIPESQUEEZE_FAULT");
    QTRY_VERIFY_WITH_TIMEOUT(steps.count() >= 4, 60000);
    QTest::qWait(2000);
    const int reached = int(steps.count());
    QTest::qWait(1000);
    QCOMPARE(int(steps.count()), reached);  // no step for a second: rank 0 waits on the stopped rank
    QVERIFY(bridge->running());
    QElapsedTimer clock;
    clock.start();
    bridge.reset();
    QVERIFY2(clock.elapsed() < 20000, qPrintable(QString("closing took %1 ms").arg(clock.elapsed())));
    ps::RunStore store((dir_.path() + "/hung.sqlite").toStdString());
    const auto runs = store.listRuns();
    QCOMPARE(int(runs.size()), 1);
    QVERIFY2(runs[0].status != "running", runs[0].status.c_str());  // the run is closed on record
  }

 private:
  MainWindowOptions options() {
    MainWindowOptions o;
    o.storePath = dir_.path() + "/runs.sqlite";
    o.userPresetDir = dir_.path() + "/user-presets";
    o.restoreLayout = false;
    return o;
  }

  qint64 runUntil(MainWindow& w, int steps) {
    QSignalSpy started(w.bridge(), &SessionBridge::runStarted);
    const QString error = w.startRun();
    if (!error.isEmpty()) qFatal("startRun: %s", qPrintable(error));
    if (!started.wait(60000)) qFatal("the run did not start within 60 s");
    QElapsedTimer clock;
    clock.start();
    while (w.live()->lastStep() < steps) {
      if (clock.elapsed() > 120000) qFatal("the run made %d steps in 120 s", int(w.live()->lastStep()));
      QTest::qWait(20);
    }
    return w.bridge()->runId();
  }

  void stop(MainWindow& w) {
    QSignalSpy ended(w.bridge(), &SessionBridge::runEnded);
    w.stopRun();
    QVERIFY(ended.wait(60000));
    QCOMPARE(ended.first().at(0).toString(), QString("stopped"));
    QVERIFY(!w.bridge()->running());
  }

  QTemporaryDir dir_;
};

QTEST_MAIN(MainWindowTest)
#include "MainWindowTest.moc"
