// MainWindow's views of saved runs: the compare tab, read-only tabs of single runs, and switching run stores.
#include "app/ui/LivePanel.h"
#include "app/ui/MainWindow.h"
#include "app/ui/ReproduceDialog.h"
#include "app/ui/SessionBridge.h"
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/RunsPanel.h"
#include "engine/runs/store/RunStore.h"

#include <QFileInfo>
#include <QSet>
#include <QStatusBar>
#include <QTabWidget>

namespace ps::ui {

QString MainWindow::compareRuns(const QList<qint64>& ids) {
  if (ids.size() < 2) return tr("Select two or more runs in the runs table to compare them.");
  tabs_->setCurrentWidget(compare_);  // first: bringing the tab forward shows the selection, these runs replace it
  compare_->setRuns(store_, ids, runs_->model()->hiddenIds());
  return {};
}

void MainWindow::compareFollowsSelection() {
  if (tabs_->currentWidget() != compare_) return;
  const QList<qint64> ids = runs_->selectedRunIds();
  const QList<qint64> shown = compare_->runIds();
  if (ids.size() < 2 || QSet<qint64>(ids.begin(), ids.end()) == QSet<qint64>(shown.begin(), shown.end())) return;
  compare_->setRuns(store_, ids, runs_->model()->hiddenIds());
}

QList<LivePanel*> MainWindow::storedRunTabs() const {
  QList<LivePanel*> out;
  for (int i = 0; i < tabs_->count(); ++i)
    if (auto* panel = qobject_cast<LivePanel*>(tabs_->widget(i)); panel && panel != live_) out.push_back(panel);
  return out;
}

QString MainWindow::openStoredRun(qint64 id) {
  LivePanel* panel = nullptr;
  for (LivePanel* open : storedRunTabs())
    if (open->storedRun()->id == id) panel = open;
  const bool fresh = panel == nullptr;
  if (fresh) panel = new LivePanel;
  const QString error = panel->showStoredRun(*store_, id);
  if (!error.isEmpty()) {
    if (fresh) delete panel;
    return error;
  }
  const RunInfo& run = *panel->storedRun();
  const QString name = QString::fromStdString(run.name);
  const QString title = tr("Run %1").arg(id) + (name.isEmpty() ? QString() : QStringLiteral(" · ") + name);
  const int index = fresh ? tabs_->addTab(panel, QString()) : tabs_->indexOf(panel);
  tabs_->setTabText(index, fontMetrics().elidedText(title, Qt::ElideRight, 240));
  tabs_->setTabToolTip(index,
                       tr("%1 (%2), read-only: as saved in %3")
                           .arg(title, QString::fromStdString(run.status), QString::fromStdString(store_->path())));
  tabs_->setCurrentIndex(index);
  return {};
}

void MainWindow::closeTab(int index) {
  QWidget* tab = tabs_->widget(index);
  if (tab == live_ || tab == compare_) return;
  tabs_->removeTab(index);
  tab->deleteLater();
}

QString MainWindow::openStore(const QString& path) {
  if (bridge_->running()) return tr("A run is recording into the current store; stop it before opening another.");
  if (reproduceDialog_ && reproduceDialog_->running())
    return tr("A claim suite is recording into the current store; cancel it or let it finish first.");
  if (!QFileInfo(path).isFile())
    return tr("There is no run store at %1. Choose an existing .sqlite file (pipesqueeze-cli creates one with "
              "--store FILE).")
        .arg(path);
  std::shared_ptr<RunStore> store;
  try {
    store = openRunStore(path.toStdString(), false);  // refuses (and leaves as it was) a file not ours
  } catch (const std::exception& e) {
    return tr("Could not open %1 as a run store: %2. The runs shown are still those of %3.")
        .arg(path, QString::fromStdString(e.what()), QString::fromStdString(store_->path()));
  }
  store_ = std::move(store);
  bridge_->setStorePath(path);
  runs_->setStore(store_);
  compare_->setRuns(store_, {});
  for (LivePanel* tab : storedRunTabs()) closeTab(tabs_->indexOf(tab));
  if (reproduceDialog_) {  // it holds the old store; made again on next use
    reproduceDialog_->deleteLater();
    reproduceDialog_ = nullptr;
  }
  showStoreInTitle();
  updateActions();
  statusBar()->showMessage((store_->readOnly() ? tr("Opened %1 read-only (it cannot be written here): %n run(s).",
                                                    nullptr, runs_->model()->rowCount())
                                               : tr("Opened %1: %n run(s).", nullptr, runs_->model()->rowCount()))
                               .arg(path),
                           8000);
  return {};
}

void MainWindow::showStoreInTitle() {
  // The window system adds the application's name ("runs.sqlite — PipeSqueeze"): the title names the store only.
  const QString name = QFileInfo(QString::fromStdString(store_->path())).fileName();
  setWindowTitle(store_->readOnly() ? tr("%1 (read-only)").arg(name) : name);
}

std::shared_ptr<RunStore> MainWindow::openRunStore(const std::string& path, bool readOnly) {
  const StoreAccess access = readOnly ? StoreAccess::ReadOnly : RunStore::accessFor(path);
  auto store = std::make_shared<RunStore>(path, access);
  if (!store->readOnly()) store->reapOrphans();  // a store only read keeps its runs as the writers left them
  return store;
}

}  // namespace ps::ui
