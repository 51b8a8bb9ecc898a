#pragma once
// Runs ▸ Reproduce…: the bundled claim suites (full titles and ids) with their claims; runs one (seeds, quick and GPU
// scales) on a worker thread with a progress bar and a cancel button, then writes its report (report.html and
// report.md, charts drawn by the chart adapter), shows its verdicts in the dialog's Verdicts tab and opens the report
// in a browser when one can be started (saying so when none can). The suite's runs go into the app's store like any
// others and show in the runs table.
#include <QDialog>

#include <functional>
#include <memory>
#include <thread>

class QCheckBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;
class QTextBrowser;
class QUrl;

namespace ps {
class RunStore;
class SuiteRunner;
struct Suite;
struct SuiteRunEvent;
struct SuiteScale;
struct Verdict;
}  // namespace ps

namespace ps::ui {

class ReproduceDialog : public QDialog {
  Q_OBJECT
 public:
  // `reportRoot`: where reports go (one folder per suite); `openReports`: open report.html when written.
  ReproduceDialog(std::shared_ptr<RunStore> store, QString reportRoot, bool openReports, QWidget* parent = nullptr);
  ~ReproduceDialog() override;

  QListWidget* suites() const { return list_; }
  QSpinBox* seeds() const { return seeds_; }
  QCheckBox* quick() const { return quick_; }
  QCheckBox* gpu() const { return gpu_; }
  bool running() const { return worker_.joinable(); }
  // Starts the selected suite; an error text (bad suite, already running, another run training), empty when started.
  QString start();
  void cancel();
  // Cancels a running suite and waits for it, the event loop turning meanwhile (the window stays responsive).
  void cancelAndWait();
  // Asked before a suite starts: an empty text, or why not now (the window's own run is training: both would share
  // the cores, and the suite's timings would be wrong).
  void setStartCheck(std::function<QString()> check) { startCheck_ = std::move(check); }
  // Writes the selected suite's report from what the store holds and shows its verdicts; the path of report.html,
  // or an error.
  QString writeReport(QString* error = nullptr);
  // What opens a written report (a browser through the desktop; tests replace it): false when nothing could.
  void setReportOpener(std::function<bool(const QUrl&)> opener) { openReport_ = std::move(opener); }

  QTabWidget* pages() const { return pages_; }          // Claim and Verdicts
  QTableWidget* verdicts() const { return verdicts_; }  // one row per rule of the last report
  QString statusText() const;
  QPushButton* reportButton() const { return report_; }

 Q_SIGNALS:
  void runFinished(qint64 runId);             // a suite run ended (the runs table refreshes)
  void suiteFinished(const QString& status);  // "finished", "cancelled" or "failed: why"
  void reportWritten(const QString& path);

 protected:
  void reject() override;  // closing while running asks the suite to stop first

 private:
  void showSelected();
  void onEvent(const SuiteRunEvent& e);
  void onDone(const QString& status);
  void updateButtons();
  SuiteScale scale() const;  // what the quick and GPU boxes ask for
  void showPlan();  // what Run would do with the suite, seeds and scale chosen
  void showVerdicts(const Suite& suite, const std::vector<Verdict>& verdicts);
  QString afterReport(const QString& path);  // opens it if asked; the words for the status line

  std::shared_ptr<RunStore> store_;
  QString reportRoot_;
  bool openReports_;
  QListWidget* list_;
  QTabWidget* pages_;
  QTextBrowser* claim_;
  QTableWidget* verdicts_;
  QSpinBox* seeds_;
  QCheckBox* quick_;
  QCheckBox* gpu_;           // enabled for suites with a GPU scale
  bool gpuOffered_ = false;  // the selected suite has one
  QProgressBar* progress_;
  QLabel* status_;
  QPushButton *run_, *cancel_, *report_;
  std::unique_ptr<SuiteRunner> runner_;
  std::thread worker_;
  std::function<QString()> startCheck_;
  std::function<bool(const QUrl&)> openReport_;
};

}  // namespace ps::ui
