#pragma once
// ps::ui::MainWindow: a thin shell that lays out the panels and wires them together:
//   ControlPanel (dock, left)  ->  settings for the next run, or commands to the running one
//   LivePanel    (tab)         <-  SessionBridge telemetry
//   CompareView  (tab)         <-  runs chosen in the RunsPanel (dock, bottom)
//   LivePanel    (closable tabs, read-only) <- one saved run each, opened from the RunsPanel
// Menus, shortcuts, the status bar and QSettings persistence live here (the compare tab, saved-run tabs and store
// switching in MainWindowRuns.cpp); everything else lives in the panels.
#include <QMainWindow>

#include <memory>

class QAction;
class QLabel;
class QTabWidget;

namespace ps {
class RunStore;
}

namespace ps::ui {

class CompareView;
class ControlPanel;
class LivePanel;
class PlanDialog;
class ReproduceDialog;
class RunsPanel;
class SessionBridge;

struct MainWindowOptions {
  QString storePath;      // empty: RunStore::defaultPath()
  QString presetPath;     // empty: the last used preset, else the default one
  QString userPresetDir;  // empty: the app's data folder
  QString reportDir;      // where suite reports go; empty: defaultReportDir()
  bool openReports = true;  // open a suite's report.html once written (tests turn this off)
  bool restoreLayout = true;
  bool readOnlyStore = false;  // view the store without writing to it, even where it could be (--read-only)
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const MainWindowOptions& options, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Actions a user (or a test) can trigger. Each returns an error text, empty on success.
  QString startRun();
  void pauseRun();
  void resumeRun();
  void stopRun();
  QString openPreset(const QString& path);
  // File ▸ Save Settings as Preset: writes the settings as a user preset and picks it (replacing one of that name
  // only when asked).
  QString savePreset(const QString& name, bool replace);
  QString compareRuns(const QList<qint64>& ids);
  // A saved run in the live layout, as a read-only tab (opened again: re-read and brought to the front).
  QString openStoredRun(qint64 id);
  QList<LivePanel*> storedRunTabs() const;
  // File ▸ Open Run Store…: the runs table, the compare view, the next runs and claim suites use that store.
  // Refused while a run or a suite is going; a file that cannot be opened leaves the current store in use.
  QString openStore(const QString& path);
  // Runs ▸ Reproduce…: the claim suites dialog (made on first use, kept for the window's life).
  ReproduceDialog* openReproduce();
  // Run ▸ Plan for This Network…: the planner on the current settings (made anew each time, for those settings);
  // what it plans is loaded into the settings panel when asked. Refused while a run or a suite is going.
  PlanDialog* openPlanner();

  ControlPanel* controls() const { return controls_; }
  LivePanel* live() const { return live_; }
  CompareView* compare() const { return compare_; }
  QString runState() const;
  // reports/ in the lab's data folder ($XDG_DATA_HOME/pipesqueeze, else ~/.local/share/pipesqueeze), beside the
  // default run store and the user's presets.
  static QString defaultReportDir();  // the status bar's permanent words on the run: starting, step and loss, paused
  RunsPanel* runs() const { return runs_; }
  SessionBridge* bridge() const { return bridge_; }
  QTabWidget* tabs() const { return tabs_; }
  std::shared_ptr<RunStore> store() const { return store_; }
  // Why the preset given in the options could not be loaded (the default one was loaded instead); empty if it was.
  QString startupError() const { return startupError_; }

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildActions();
  void buildMenus();
  void connectPanels();
  void onSettingChanged(const QString& key, const QVariant& value);
  void onRunEnded(const QString& status, const QString& reason);
  void updateActions();
  void showError(const QString& message);
  void savePresetAs();
  void exportChartsPng();
  void closeTab(int index);
  void compareFollowsSelection();
  void sizeToScreen();
  void showStoreInTitle();
  // The store at `path`, read-only where this user cannot write it (or where `readOnly` asks); a writable one has its
  // orphaned runs marked failed.
  static std::shared_ptr<RunStore> openRunStore(const std::string& path, bool readOnly);
  void about();
  void restoreSettings(const MainWindowOptions& options);
  void saveSettings();

  std::shared_ptr<RunStore> store_;
  SessionBridge* bridge_;
  ControlPanel* controls_;
  LivePanel* live_;
  CompareView* compare_;
  RunsPanel* runs_;
  QTabWidget* tabs_;
  QLabel* runLabel_;
  QString startupError_;
  QString reportDir_;
  bool openReports_ = true;
  ReproduceDialog* reproduceDialog_ = nullptr;
  PlanDialog* planDialog_ = nullptr;
  QAction *reproduce_, *plan_, *start_, *pause_, *resume_, *stop_, *openPreset_, *openStore_, *savePreset_, *exportPng_,
      *compareSelected_, *closeTab_, *quit_, *about_;
};

}  // namespace ps::ui
