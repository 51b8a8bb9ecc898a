#pragma once
// ps::ui::TargetTable: how long and how many bytes each compared run needed to reach a target accuracy (perplexity
// for language models), read between the evaluations around it as the claim suites measure it: the step, the wall
// and emulated time and the wire bytes sent by then; "not reached" otherwise.
#include "app/ui/runs/RunNames.h"
#include "app/ui/runs/RunSeries.h"

#include <QWidget>

#include <optional>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QTableWidget;

namespace ps::ui {

struct TargetReach {
  double step = 0, wall_s = 0, emulated_s = 0, wire_bytes = 0;
};
// When the run's evaluation first reaches `target` (accuracy as a fraction at or above it; for a language model,
// perplexity at or below it); nullopt when it never does or has no evaluation.
std::optional<TargetReach> reachTarget(const RunSeries& run, double target);

class TargetTable : public QWidget {
  Q_OBJECT
 public:
  explicit TargetTable(QWidget* parent = nullptr);

  // The runs must outlive the next setRuns; each row is named as in `names`.
  void setRuns(std::vector<const RunSeries*> runs, RunNames names);
  // Accuracy in percent for classifiers (85 = 85%), perplexity for language models.
  double target() const;
  void setTarget(double target);
  bool languageModels() const { return languageModels_; }  // the target is a perplexity, not an accuracy
  QTableWidget* table() const { return table_; }

 Q_SIGNALS:
  void targetChanged();

 private:
  void refill();

  std::vector<const RunSeries*> runs_;
  RunNames names_;
  bool languageModels_ = false;
  QDoubleSpinBox* target_;
  QLabel* what_;
  QTableWidget* table_;
};

}  // namespace ps::ui
