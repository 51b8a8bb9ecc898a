#pragma once
// Run ▸ Plan for This Network…: the compression planner (engine/session/Planner.h) on the settings in the panel, for
// a network given here. Plans on a worker thread with a progress bar and a cancel button, then shows per link
// direction the chosen setting, its bytes, codec times, error and the evidence behind it, and the predicted step and
// time to target against dense and the best uniform setting. Load into Settings hands the planned configuration to
// the settings panel, ready to start.
#include <QDialog>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ps {
struct PlanOutcome;
}

namespace ps::ui {

class PlanDialog : public QDialog {
  Q_OBJECT
 public:
  // `config`: the full configuration to plan for (its network fills the fields); `store`: the run store whose
  // finished runs are the accuracy evidence.
  PlanDialog(nlohmann::json config, QString store, QWidget* parent = nullptr);
  ~PlanDialog() override;

  QDoubleSpinBox* bandwidth() const { return bandwidth_; }
  QDoubleSpinBox* latency() const { return latency_; }
  QComboBox* egress() const { return egress_; }
  QDoubleSpinBox* accuracyBudget() const { return accuracyBudget_; }
  QDoubleSpinBox* errorBudget() const { return errorBudget_; }
  QSpinBox* steps() const { return steps_; }
  QTableWidget* table() const { return table_; }
  QPushButton* loadButton() const { return load_; }
  QString statusText() const;
  QString summaryText() const;
  bool running() const { return worker_.joinable(); }
  // The configuration planned last (null before a plan is done).
  const nlohmann::json& planned() const { return planned_; }

  // Starts planning; an error text (running already, a run is training, bad settings), empty when started.
  QString start();
  void cancel();
  // Asked before planning starts: an empty text, or why not now (a run training would share the cores and the
  // profile would measure both).
  void setStartCheck(std::function<QString()> check) { startCheck_ = std::move(check); }

 Q_SIGNALS:
  void planFinished(const QString& status);  // "planned", "cancelled" or "failed: why"
  void loadRequested(const nlohmann::json& config);

 protected:
  void reject() override;  // closing while planning cancels it first

 private:
  void onProgress(const QString& what, int done, int total);
  void onDone(const QString& status, std::shared_ptr<PlanOutcome> outcome);
  void showOutcome(const PlanOutcome& outcome);
  void updateButtons();
  void waitForWorker();

  nlohmann::json config_, planned_;
  QString store_;
  QDoubleSpinBox *bandwidth_, *latency_, *accuracyBudget_, *errorBudget_;
  QComboBox* egress_;
  QSpinBox* steps_;
  QTableWidget* table_;
  QLabel *summary_, *status_;
  QProgressBar* progress_;
  QPushButton *plan_, *cancel_, *load_;
  std::thread worker_;
  std::atomic<bool> cancelled_{false};
  std::function<QString()> startCheck_;
};

}  // namespace ps::ui
