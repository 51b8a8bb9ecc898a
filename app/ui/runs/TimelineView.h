#pragma once
// ps::ui::TimelineView: a step's timeline (engine/core/Timeline.h) as a chart, micro-batch by micro-batch: a row per
// stage (and replica) with its passes, codec and waits, a row per link direction with each message's time on the
// wire, and an arrow per message from sender to receiver; the step picker (the latest step, or any saved one); what
// if (another network, a cheaper or dearer codec) drawn beneath the recorded timeline; and the step's decomposition:
// bubble against the schedule's ideal, critical path, and per link direction the codec's time against the wire time
// it saved (red where the codec costs more).
//
// Fed a saved run's step traces (setTraces) or a live run's, step by step (addTrace: the latest steps are kept, and
// the view follows the newest unless a step was picked).
#include "app/ui/charts/GanttWidget.h"
#include "engine/core/Timeline.h"
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"

#include <QWidget>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace ps::ui {

class NetworkControls;

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);
  ~TimelineView() override;

  // A saved run: every step it saved (decoded when shown). Shows the last one.
  void setTraces(int64_t runId, std::vector<TraceRow> traces);
  // A live run: keeps the latest kLiveSteps steps; shows the newest while "latest" is ticked.
  static constexpr size_t kLiveSteps = 2000;
  void addTrace(int64_t step, std::shared_ptr<const StepTrace> trace);
  void clear();

  std::vector<int64_t> steps() const;  // the steps that can be shown, in order
  int64_t step() const;                // the step shown (0: none)
  void showStep(int64_t step);         // unticks "latest" unless it is the newest
  void setWhatIf(const RetimeNetwork& network, double codecScale);
  // What if the step's links had used another saved run's codec (its message sizes and encode and decode times,
  // link direction by link direction, at the same step or its last): the runs offered, and how to read a run's step
  // traces when one is picked. setCodecRun(0) goes back to the run's own codec.
  using TraceLoader = std::function<std::vector<TraceRow>(int64_t runId)>;
  void setCodecRuns(const std::vector<std::pair<int64_t, QString>>& runs, TraceLoader load);
  void setCodecRun(int64_t runId);
  int64_t codecRun() const { return codecRunId_; }
  // Draws where each stage really ran each event on this machine instead of the emulated clock (what-if off).
  void setWallClock(bool wall);

  const std::optional<Timeline>& recorded() const { return recorded_; }
  const std::optional<Timeline>& whatIf() const { return whatIf_; }
  QString decompositionText() const;  // what the panel beside the chart says (plain text)
  GanttWidget* chart() const { return chart_; }
  QString lastError() const { return error_; }

  // Writes the saved steps as a Chrome/Perfetto trace file (engine/runs/trace/StepTimelines.h), at the what-if's
  // network and codec when one is set. Empty on success, else why not.
  QString exportTrace(const QString& path) const;

 protected:
  void showEvent(QShowEvent* event) override;  // catches up with the steps that came while hidden

 private:
  void rebuild();
  void forgetCodecRuns();
  std::shared_ptr<const StepTrace> traceOf(int64_t step) const;

  int64_t runId_ = 0;
  std::vector<TraceRow> saved_;  // a saved run's
  std::deque<std::pair<int64_t, std::shared_ptr<const StepTrace>>> live_;
  std::optional<Timeline> recorded_, whatIf_;
  QString error_;
  RetimeNetwork network_;
  double codecScale_ = 1;
  int64_t codecRunId_ = 0;  // the run whose codec the what-if takes (0: this run's own)
  std::vector<TraceRow> codecTraces_;
  TraceLoader loadTraces_;
  bool rebuilding_ = false;
  bool stale_ = false;  // steps came while hidden

  QSpinBox* step_;
  QCheckBox* latest_;
  QCheckBox* arrows_;
  QCheckBox* wall_;
  NetworkControls* network_controls_;
  QDoubleSpinBox* codec_;
  QComboBox* codecRuns_;
  QPushButton* export_;
  GanttWidget* chart_;
  QLabel* summary_;
};

}  // namespace ps::ui
