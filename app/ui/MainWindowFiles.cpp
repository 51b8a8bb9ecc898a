// MainWindow's files: presets it opens and saves, charts it exports, where suite reports go and the dialog that
// writes them.
#include "app/ui/MainWindow.h"

#include "app/ui/ControlPanel.h"
#include "app/ui/LivePanel.h"
#include "app/ui/PlanDialog.h"
#include "app/ui/PresetLibrary.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/charts/ExportSettings.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/RunsPanel.h"
#include "engine/core/UserFolders.h"
#include "engine/runs/config/Config.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

namespace ps::ui {

QString MainWindow::defaultReportDir() {
  // Beside the runs and the user's presets, in the lab's one data folder (the CLI's too).
  const std::string data = userDataFolder();
  return data.empty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/reports")
                      : QString::fromStdString(data) + QStringLiteral("/reports");
}

QString MainWindow::openPreset(const QString& path) {
  if (bridge_->running()) return tr("Stop the run before loading another preset.");
  const QString error = controls_->loadPresetFile(path);
  if (error.isEmpty()) statusBar()->showMessage(tr("Loaded %1").arg(path), 4000);
  return error;
}

PlanDialog* MainWindow::openPlanner() {
  if (planDialog_ && planDialog_->running()) {
    planDialog_->raise();
    return planDialog_;
  }
  delete planDialog_;
  planDialog_ = new PlanDialog(controls_->config(), QString::fromStdString(store_->path()), this);
  planDialog_->setStartCheck([this] {
    if (bridge_->running())
      return tr("A run is training in this window; stop it first (the planner's profile would share the cores with "
                "it, and its timings would be wrong).");
    if (reproduceDialog_ && reproduceDialog_->running())
      return tr("A claim suite is running (Runs ▸ Reproduce a Claim…); cancel it or let it finish first.");
    return QString();
  });
  connect(planDialog_, &PlanDialog::planFinished, this, [this] { updateActions(); });
  connect(planDialog_, &PlanDialog::loadRequested, this, [this](const nlohmann::json& planned) {
    try {
      controls_->loadConfig(Config::fromJson(planned, "the planned settings").json);
      statusBar()->showMessage(tr("The plan is in the settings panel; Start runs it."), 8000);
    } catch (const std::exception& e) {
      showError(QString::fromStdString(e.what()));
    }
  });
  planDialog_->show();
  planDialog_->raise();
  return planDialog_;
}

ReproduceDialog* MainWindow::openReproduce() {
  if (!reproduceDialog_) {
    reproduceDialog_ = new ReproduceDialog(store_, reportDir_, openReports_, this);
    reproduceDialog_->setStartCheck([this] {
      return bridge_->running() ? tr("A run is training in this window; stop it first (the suite's runs would share "
                                     "the cores with it, and their timings would be wrong).")
                                : QString();
    });
    connect(reproduceDialog_, &ReproduceDialog::runFinished, runs_, &RunsPanel::refresh);
    connect(reproduceDialog_, &ReproduceDialog::suiteFinished, this, [this] { updateActions(); });
    connect(reproduceDialog_, &ReproduceDialog::reportWritten, this,
            [this](const QString& path) { statusBar()->showMessage(tr("Suite report written: %1").arg(path), 8000); });
  }
  reproduceDialog_->show();
  reproduceDialog_->raise();
  return reproduceDialog_;
}

void MainWindow::savePresetAs() {
  QInputDialog ask(this);
  ask.setWindowTitle(tr("Save Settings as Preset"));
  ask.setLabelText(tr("Name of the new preset (saved in %1, where the CLI finds it too):")
                       .arg(QDir::toNativeSeparators(controls_->library().userDir())));
  const QString loaded = QFileInfo(controls_->presetPath()).completeBaseName();
  ask.setTextValue(loaded.isEmpty() ? QString() : loaded + (controls_->modified() ? tr("-edited") : QString()));
  ask.setMinimumWidth(fontMetrics().horizontalAdvance(ask.labelText()) + 48);  // nothing cut, title included
  if (ask.exec() != QDialog::Accepted) return;
  QString error = savePreset(ask.textValue(), false);
  if (error.contains(tr("exists already")) &&
      QMessageBox::question(this, tr("Replace Preset?"), error + tr(" Replace it?")) == QMessageBox::Yes)
    error = savePreset(ask.textValue(), true);
  showError(error);
}

QString MainWindow::savePreset(const QString& name, bool replace) {
  PresetLibrary& library = controls_->library();
  const QString error = library.save(name, controls_->config(), replace);
  if (!error.isEmpty()) return error;
  controls_->reloadPresetList();
  // The new preset is what the settings are now: picked in the list, not "(modified)".
  if (const QString loadError = controls_->loadPresetFile(library.pathFor(name)); !loadError.isEmpty())
    return loadError;
  statusBar()->showMessage(tr("Saved %1").arg(library.pathFor(name)), 6000);
  return {};
}

void MainWindow::exportChartsPng() {
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Export charts to folder"), exports::folder(QStringLiteral("charts")));
  if (dir.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("charts"), dir);
  const int written = tabs_->currentWidget() == compare_ ? compare_->exportAllPng(dir) : live_->exportPng(dir);
  statusBar()->showMessage(
      tr("Wrote %1 PNG files to %2 at %3× the screen's size").arg(written).arg(dir).arg(exports::pngScale()), 6000);
}

}  // namespace ps::ui
