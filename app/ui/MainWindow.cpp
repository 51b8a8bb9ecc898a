#include "app/ui/MainWindow.h"
#include "engine/core/RunSummary.h"

#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/PlanDialog.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/RunsPanel.h"
#include "app/ui/runs/TargetTable.h"
#include "engine/core/CodeVersion.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/Command.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>

// The icon lives in a resource compiled into a static library: it has to be registered by hand.
static void initResources() { Q_INIT_RESOURCE(pipesqueeze); }

namespace ps::ui {

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent) : QMainWindow(parent) {
  initResources();
  setWindowIcon(QIcon(QStringLiteral(":/icons/pipesqueeze.svg")));
  const QString storePath =
      options.storePath.isEmpty() ? QString::fromStdString(RunStore::defaultPath()) : options.storePath;
  // A store this user cannot write (shared, on a read-only file system) is opened to be viewed; errors reach main().
  store_ = openRunStore(storePath.toStdString(), options.readOnlyStore);
  reportDir_ = options.reportDir.isEmpty() ? defaultReportDir() : options.reportDir;
  openReports_ = options.openReports;
  bridge_ = new SessionBridge(storePath, this);
  controls_ = new ControlPanel(PresetLibrary(options.userPresetDir));
  live_ = new LivePanel;
  compare_ = new CompareView;
  runs_ = new RunsPanel(store_);
  tabs_ = new QTabWidget;
  tabs_->addTab(live_, tr("&Live"));
  tabs_->addTab(compare_, tr("&Compare"));
  // Saved runs open in tabs of their own, which close; the live and compare tabs stay.
  tabs_->setTabsClosable(true);
  for (int i = 0; i < tabs_->count(); ++i)
    for (auto side : {QTabBar::LeftSide, QTabBar::RightSide}) tabs_->tabBar()->setTabButton(i, side, nullptr);
  connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
  setCentralWidget(tabs_);
  showStoreInTitle();

  auto dock = [this](QWidget* w, const QString& title, const QString& name, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);  // needed by saveState()
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  dock(controls_, tr("Settings"), "settingsDock", Qt::LeftDockWidgetArea);
  dock(runs_, tr("Runs"), "runsDock", Qt::BottomDockWidgetArea);
  runLabel_ = new QLabel(tr("ready"));
  statusBar()->addPermanentWidget(runLabel_);

  buildActions();
  buildMenus();
  connectPanels();
  restoreSettings(options);
  updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions() {
  auto make = [this](const QString& text, const QKeySequence& keys, const QString& tip, auto slot) {
    auto* a = new QAction(text, this);
    a->setShortcut(keys);
    a->setStatusTip(tip);
    connect(a, &QAction::triggered, this, slot);
    return a;
  };
  start_ = make(tr("&Start"), QKeySequence(Qt::CTRL | Qt::Key_R), tr("Start a run with the current settings"),
                [this] { showError(startRun()); });
  pause_ = make(tr("&Pause"), QKeySequence(Qt::CTRL | Qt::Key_P), tr("Pause at the next step"), [this] { pauseRun(); });
  resume_ = make(tr("Res&ume"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), tr("Resume a paused run"),
                 [this] { resumeRun(); });
  stop_ = make(tr("S&top"), QKeySequence(Qt::CTRL | Qt::Key_Period), tr("Stop the run; what was recorded stays"),
               [this] { stopRun(); });
  openPreset_ = make(tr("&Open Preset…"), QKeySequence::Open, tr("Load settings from a preset file"), [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open preset"), controls_->presetPath(),
                                                      tr("Presets (*.json)"));
    if (!path.isEmpty()) showError(openPreset(path));
  });
  openStore_ = make(tr("Open Run S&tore…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
                    tr("Show the runs of another run store; new runs are recorded there"), [this] {
                      const QString path = QFileDialog::getOpenFileName(
                          this, tr("Open run store"), QFileInfo(QString::fromStdString(store_->path())).path(),
                          tr("Run stores (*.sqlite *.db);;All files (*)"));
                      if (!path.isEmpty()) showError(openStore(path));
                    });
  savePreset_ = make(tr("&Save Settings as Preset…"), QKeySequence::Save, tr("Keep the current settings as a preset"),
                     [this] { savePresetAs(); });
  exportPng_ = make(tr("Export &Charts as PNG…"), QKeySequence(Qt::CTRL | Qt::Key_E),
                    tr("Write every chart of the current tab to a folder"), [this] { exportChartsPng(); });
  reproduce_ = make(tr("&Reproduce a Claim…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                    tr("Run a paper's claim as a suite of runs and get a report with verdicts"),
                    [this] { openReproduce(); });
  plan_ = make(tr("Plan for This &Network…"), QKeySequence(),
               tr("Find what each link should send on a network to reach the target soonest, from the current settings"),
               [this] { openPlanner(); });
  compareSelected_ = make(tr("&Compare Selected Runs"), QKeySequence(Qt::CTRL | Qt::Key_D),
                          tr("Overlay the runs selected in the runs table"),
                          [this] { showError(compareRuns(runs_->selectedRunIds())); });
  closeTab_ = make(tr("Close &Run Tab"), QKeySequence::Close, tr("Close the saved run's tab in front"),
                   [this] { closeTab(tabs_->currentIndex()); });
  quit_ = make(tr("&Quit"), QKeySequence::Quit, tr("Quit PipeSqueeze"), [this] { close(); });
  about_ = make(tr("&About PipeSqueeze"), QKeySequence(), tr("Version and credits"), [this] { about(); });
  start_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  pause_->setIcon(style()->standardIcon(QStyle::SP_MediaPause));
  resume_->setIcon(style()->standardIcon(QStyle::SP_MediaSeekForward));
  stop_->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addActions({openPreset_, savePreset_});
  file->addSeparator();
  file->addAction(openStore_);
  file->addSeparator();
  file->addAction(exportPng_);
  file->addSeparator();
  file->addAction(closeTab_);
  file->addAction(quit_);
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addActions({start_, pause_, resume_, stop_});
  run->addSeparator();
  run->addAction(plan_);
  QMenu* runsMenu = menuBar()->addMenu(tr("R&uns"));
  runsMenu->addAction(compareSelected_);
  runsMenu->addAction(runs_->openAction());
  runsMenu->addAction(runs_->tensorBoardAction());
  runsMenu->addAction(runs_->traceAction());
  runsMenu->addSeparator();
  runsMenu->addAction(reproduce_);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(about_);
  QToolBar* bar = addToolBar(tr("Run"));
  bar->setObjectName("runToolBar");
  bar->addActions({start_, pause_, resume_, stop_});
}

void MainWindow::connectPanels() {
  connect(controls_, &ControlPanel::changed, this, &MainWindow::onSettingChanged);
  connect(controls_, &ControlPanel::errorOccurred, this, &MainWindow::showError);
  connect(bridge_, &SessionBridge::stepArrived, live_, &LivePanel::addStep);
  connect(bridge_, &SessionBridge::evalArrived, live_, &LivePanel::addEval);
  connect(bridge_, &SessionBridge::histogramArrived, live_, &LivePanel::addHistogram);
  connect(bridge_, &SessionBridge::eventArrived, live_, &LivePanel::addEvent);
  connect(bridge_, &SessionBridge::stepArrived, this, [this](const StepRecord& s) {
    runLabel_->setText(tr("run %1 · step %2 · loss %3").arg(bridge_->runId()).arg(s.step).arg(s.loss, 0, 'g', 4));
  });
  connect(bridge_, &SessionBridge::eventArrived, this, [this](const EventRecord& e) {
    if (e.type() == EventKind::Pause)  // says so until it resumes: no step arrives meanwhile to replace the words
      runLabel_->setText(tr("run %1 · paused at step %2 · Resume: Ctrl+Shift+P").arg(bridge_->runId()).arg(e.step));
    else if (e.type() == EventKind::Resume)
      runLabel_->setText(tr("run %1 · resumed at step %2").arg(bridge_->runId()).arg(e.step));
    else if (e.type() == EventKind::Setting) {
      const QString key = QString::fromStdString(e.detail.value("key", std::string()));
      const nlohmann::json to = e.detail.value("to", nlohmann::json());
      controls_->showApplied(key, to);
      statusBar()->showMessage(
          tr("Applied at step %1: %2 = %3").arg(e.step).arg(key, QString::fromStdString(to.dump())), 8000);
    } else if (e.type() == EventKind::Reset)
      statusBar()->showMessage(tr("Compensation state reset: %1").arg(QString::fromStdString(e.detail.dump())), 8000);
    updateActions();
  });
  connect(bridge_, &SessionBridge::progressArrived, this, [this](const ProgressRecord& p) {
    runLabel_->setText(tr("run %1 · step %2 · evaluating %3 · %4 of %5 batches")
                           .arg(bridge_->runId())
                           .arg(p.step)
                           .arg(p.compressed ? tr("through the codecs") : tr("uncompressed"))
                           .arg(p.done)
                           .arg(p.total));
  });
  connect(bridge_, &SessionBridge::runStarted, this, [this] {
    live_->reset(bridge_->config());  // only now: a start that fails keeps the last run's charts
    runs_->model()->setStarting(nlohmann::json());
    runs_->refresh();
  });
  connect(bridge_, &SessionBridge::runEnded, this, &MainWindow::onRunEnded);
  connect(bridge_, &SessionBridge::startFailed, this, [this](const QString& message) {
    runs_->model()->setStarting(nlohmann::json());
    runLabel_->setText(tr("the run could not start"));
    controls_->setRunning(false);
    updateActions();
    showError(tr("The run could not start: %1").arg(message));
  });
  connect(runs_, &RunsPanel::compareRequested, this, [this](const QList<qint64>& ids) { showError(compareRuns(ids)); });
  // The compare tab shows the runs selected in the table (two or more) whenever it is in front.
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    compareFollowsSelection();
    updateActions();  // Close Run Tab follows the tab in front
  });
  connect(runs_->view()->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          [this] { compareFollowsSelection(); });
  connect(runs_, &RunsPanel::openRequested, this, [this](qint64 id) { showError(openStoredRun(id)); });
  // The visibility tick in the runs table and the compare view's run list are one setting.
  connect(runs_->model(), &RunsModel::visibilityChanged, compare_, &CompareView::setRunVisible);
  connect(compare_, &CompareView::runVisibilityChanged, runs_->model(), &RunsModel::setRunVisible);
  connect(runs_->model(), &RunsModel::runEdited, compare_, [this](qint64 id) {
    if (compare_->runIds().contains(id)) compare_->reload();  // a new name or tags can change what it is called
  });
  // The runs table's time to target reads the compare view's target and the network it re-times for.
  connect(compare_, &CompareView::timeTargetChanged, this, [this] {
    auto t = runs_->model()->timeTarget();
    const TargetTable* table = compare_->targetTable();
    if (table->languageModels())
      t.perplexity = table->target();
    else
      t.accuracy = table->target() / 100;
    t.network = compare_->network();
    runs_->model()->setTimeTarget(t);
  });
  connect(runs_, &RunsPanel::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 6000); });
  connect(runs_, &RunsPanel::errorOccurred, this, &MainWindow::showError);
  connect(compare_, &CompareView::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 6000); });
  connect(compare_, &CompareView::errorOccurred, this, &MainWindow::showError);
  // The runs table follows a live run's figures; selections survive a refresh.
  auto* refresh = new QTimer(this);
  refresh->setInterval(2000);
  connect(refresh, &QTimer::timeout, this, [this] {
    if (bridge_->running()) runs_->refresh();
  });
  refresh->start();
  runs_->refresh();
}

QString MainWindow::runState() const {
  return runLabel_->text();
}

QString MainWindow::startRun() {
  if (store_->readOnly())
    return tr("%1 is open read-only: a run cannot be recorded in it. Open a writable store (Runs ▸ Open Store…) "
              "first.")
        .arg(QString::fromStdString(store_->path()));
  if (reproduceDialog_ && reproduceDialog_->running())
    return tr("A claim suite is running (Runs ▸ Reproduce a Claim…); cancel it or let it finish first.");
  if (planDialog_ && planDialog_->running())
    return tr("The planner is measuring (Run ▸ Plan for This Network…); cancel it or let it finish first.");
  const QString error = bridge_->start(controls_->runConfig());
  if (!error.isEmpty()) return error;
  runs_->model()->setStarting(bridge_->config());  // a row for it until the store has its record
  controls_->setRunning(true);
  tabs_->setCurrentWidget(live_);
  statusBar()->showMessage(tr("Preparing the run…"), 4000);
  runLabel_->setText(tr("starting… (data, model, stages)"));  // until the first step arrives
  updateActions();
  return {};
}

void MainWindow::pauseRun() { bridge_->pause(); }
void MainWindow::resumeRun() { bridge_->resume(); }
void MainWindow::stopRun() {
  bridge_->stop();
  statusBar()->showMessage(tr("Stopping after the current step; the final evaluation still runs…"), 6000);
}

void MainWindow::onSettingChanged(const QString& key, const QVariant& value) {
  if (!bridge_->running()) {
    statusBar()->showMessage(tr("%1 = %2 (for the next run)").arg(key, value.toString()), 4000);
    return;
  }
  // The session decides what may change mid-run (those widgets are disabled) and says why it refuses.
  const QString error = bridge_->set(key, jsonFromVariant(value));
  if (!error.isEmpty()) {
    // The session keeps its setting: the panel shows it again.
    try {
      controls_->showApplied(key, configValue(bridge_->config(), key.toStdString()));
    } catch (const std::exception&) {
    }
    showError(error);
  }
  else statusBar()->showMessage(tr("%1 = %2 will apply at the next step").arg(key, value.toString()), 4000);
}

void MainWindow::onRunEnded(const QString& status, const QString& reason) {
  controls_->setRunning(false);
  live_->flush();
  runs_->refresh();
  updateActions();
  runLabel_->setText(tr("run %1 %2").arg(bridge_->runId()).arg(status));
  if (status == run_status::kFinished || status == run_status::kStopped)
    statusBar()->showMessage(tr("Run %1.").arg(status), 8000);
  else showError(tr("The run ended as %1: %2").arg(status, reason));
}

void MainWindow::updateActions() {
  const bool running = bridge_->running(), writable = !store_->readOnly();
  start_->setEnabled(!running && writable);
  reproduce_->setEnabled(writable);
  const QString why = tr("%1 is open read-only: its runs can be viewed, compared and exported, not added to. Open a "
                         "writable store (Runs ▸ Open Store…) to start one.")
                          .arg(QString::fromStdString(store_->path()));
  start_->setStatusTip(writable ? tr("Start a run with the current settings") : why);
  start_->setToolTip(writable ? tr("Start a run with the current settings") : why);
  pause_->setEnabled(running && !bridge_->paused());
  resume_->setEnabled(running && bridge_->paused());
  stop_->setEnabled(running);
  closeTab_->setEnabled(tabs_->currentWidget() != live_ && tabs_->currentWidget() != compare_);
  openPreset_->setEnabled(!running);
  openStore_->setEnabled(!running);
  plan_->setEnabled(!running);
}

void MainWindow::showError(const QString& message) {
  if (message.isEmpty()) return;
  statusBar()->showMessage(message, 15000);
  // Modal dialogs would block tests and scripted runs: offscreen, the status bar is the place.
  if (isVisible() && QGuiApplication::platformName() != QLatin1String("offscreen"))
    QMessageBox::warning(this, tr("PipeSqueeze"), message);
}

void MainWindow::about() {
  QMessageBox::about(this, tr("About PipeSqueeze"),
                     tr("<h3>PipeSqueeze %1</h3><p>Code %2.</p><p>A lab for communication compression in "
                        "pipeline-parallel training: quantization, TopK, error feedback, AQ-SGD, shifted compression "
                        "and GraVAC, on LibTorch.</p><p>Runs are kept in <code>%3</code>.</p>")
                         .arg(QStringLiteral(PIPESQUEEZE_VERSION), QString::fromLatin1(codeVersion()),
                              QString::fromStdString(store_->path())));
}

void MainWindow::restoreSettings(const MainWindowOptions& options) {
  QSettings settings;
  if (!options.presetPath.isEmpty()) {  // asked for by name: a problem with it is reported, never skipped
    startupError_ = controls_->loadPresetFile(options.presetPath);
    if (!startupError_.isEmpty()) controls_->loadPresetFile(PresetLibrary::defaultPresetPath());
    showError(startupError_);
  } else {
    QString preset = settings.value("presetPath").toString();
    if (preset.isEmpty() || !QFileInfo::exists(preset)) preset = PresetLibrary::defaultPresetPath();
    showError(controls_->loadPresetFile(preset));
  }
  if (!options.restoreLayout) return;
  if (!restoreGeometry(settings.value("geometry").toByteArray())) sizeToScreen();
  restoreState(settings.value("windowState").toByteArray());
  runs_->restoreState(settings.value("runsTable").toByteArray());
}

// The first launch: most of the screen, centred, rather than the widgets' minimum with the settings panel scrolling.
void MainWindow::sizeToScreen() {
  const QScreen* screen = QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect available = screen->availableGeometry();
  const QSize size(int(available.width() * 0.85), int(available.height() * 0.85));
  setGeometry(QStyle::alignedRect(Qt::LeftToRight, Qt::AlignCenter, size, available));
}

void MainWindow::saveSettings() {
  QSettings settings;
  settings.setValue("presetPath", controls_->presetPath());
  settings.setValue("geometry", saveGeometry());
  settings.setValue("windowState", saveState());
  settings.setValue("runsTable", runs_->saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (bridge_->running() &&
      QGuiApplication::platformName() != QLatin1String("offscreen") &&
      QMessageBox::question(this, tr("Stop the run?"),
                            tr("A run is in progress. Stop it and quit? What it recorded so far is kept.")) !=
          QMessageBox::Yes) {
    event->ignore();
    return;
  }
  saveSettings();
  bridge_->stop();
  if (reproduceDialog_ && reproduceDialog_->running()) {
    statusBar()->showMessage(tr("Stopping the claim suite after its current step…"));
    reproduceDialog_->cancelAndWait();  // what finished is kept; the suite resumes next time
  }
  event->accept();
}

}  // namespace ps::ui
