#include "app/ui/runs/TimelineView.h"

#include "app/ui/charts/ExportSettings.h"
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/TimelineBands.h"
#include "engine/core/AtomicFile.h"
#include "engine/runs/trace/StepTimelines.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

namespace ps::ui {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  step_ = new QSpinBox;
  step_->setPrefix(tr("step "));
  step_->setKeyboardTracking(false);
  step_->setToolTip(tr("The step whose timeline is shown"));
  latest_ = new QCheckBox(tr("Latest"));
  latest_->setChecked(true);
  latest_->setToolTip(tr("Follow the newest step"));
  arrows_ = new QCheckBox(tr("Messages"));
  arrows_->setChecked(true);
  arrows_->setToolTip(tr("An arrow per message, from the sender's encode to the receiver's decode"));
  wall_ = new QCheckBox(tr("Wall clock"));
  wall_->setToolTip(
      tr("Where each stage really ran each event on this machine, instead of the emulated clock of the "
         "link model (what if applies to the emulated clock only)"));
  network_controls_ = new NetworkControls;
  network_controls_->setToolTip(tr("What if: the same step on another network, drawn beneath the recorded one"));
  codec_ = new QDoubleSpinBox;
  codec_->setPrefix(tr("codec time x"));
  codec_->setRange(0.01, 100);
  codec_->setValue(1);
  codec_->setSingleStep(0.25);
  codec_->setKeyboardTracking(false);
  codec_->setToolTip(tr("What if encoding and decoding took this many times as long (0.5: a codec twice as fast)"));
  codecRuns_ = new QComboBox;
  codecRuns_->addItem(tr("its own codec"), QVariant::fromValue<qlonglong>(0));
  codecRuns_->setToolTip(
      tr("What if the links had used another saved run's codec: its message sizes and its "
         "encode and decode times, link direction by link direction"));
  codecRuns_->setVisible(false);  // a saved run's view offers the store's other runs
  export_ = new QPushButton(tr("Export trace..."));
  export_->setToolTip(tr("Saved steps as a Chrome/Perfetto trace file (ui.perfetto.dev, chrome://tracing)"));
  chart_ = new GanttWidget;
  chart_->setKinds(timelineKinds());
  summary_ = new QLabel;
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);
  summary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* controls = new QHBoxLayout;
  controls->addWidget(step_);
  controls->addWidget(latest_);
  controls->addWidget(arrows_);
  controls->addWidget(wall_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("What if:")));
  controls->addWidget(network_controls_);
  controls->addWidget(codec_);
  controls->addWidget(codecRuns_);
  controls->addStretch();
  controls->addWidget(export_);
  auto* scroll = new QScrollArea;
  scroll->setWidget(chart_);
  scroll->setWidgetResizable(true);
  auto* side = new QScrollArea;  // the decomposition, beside the chart
  side->setWidget(summary_);
  side->setWidgetResizable(true);
  side->setMinimumWidth(260);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(scroll);
  split->addWidget(side);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(split, 1);

  connect(step_, &QSpinBox::valueChanged, this, [this](int) {
    if (!rebuilding_) {
      latest_->setChecked(step_->value() == step_->maximum() && latest_->isChecked());
      rebuild();
    }
  });
  connect(latest_, &QCheckBox::toggled, this, [this](bool on) {
    if (on) rebuild();
  });
  connect(arrows_, &QCheckBox::toggled, chart_, &GanttWidget::setArrowsShown);
  connect(wall_, &QCheckBox::toggled, this, [this](bool on) {
    network_controls_->setEnabled(!on);
    codec_->setEnabled(!on);
    codecRuns_->setEnabled(!on);
    rebuild();
  });
  connect(network_controls_, &NetworkControls::networkChanged, this, [this] {
    network_ = network_controls_->network();
    rebuild();
  });
  connect(codec_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    codecScale_ = v;
    rebuild();
  });
  connect(codecRuns_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (!rebuilding_) setCodecRun(codecRuns_->itemData(index).toLongLong());
  });
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export trace"), exports::suggestedPath(QStringLiteral("trace"), QStringLiteral("run-%1.json").arg(runId_)),
        tr("Trace files (*.json)"));
    if (path.isEmpty()) return;
    exports::rememberFolder(QStringLiteral("trace"), path);
    const QString why = exportTrace(path);
    summary_->setText(why.isEmpty() ? tr("Wrote %1").arg(path) : why);
  });
  rebuild();
}

TimelineView::~TimelineView() = default;

void TimelineView::setWallClock(bool wall) {
  wall_->setChecked(wall);
}

void TimelineView::setTraces(int64_t runId, std::vector<TraceRow> traces) {
  runId_ = runId;
  saved_ = std::move(traces);
  live_.clear();
  forgetCodecRuns();
  latest_->setChecked(true);
  rebuild();
}

void TimelineView::addTrace(int64_t step, std::shared_ptr<const StepTrace> trace) {
  if (!trace) return;
  live_.emplace_back(step, std::move(trace));
  while (live_.size() > kLiveSteps) live_.pop_front();
  if (latest_->isChecked() && isVisible()) {
    rebuild();
  } else {  // the picker still learns of the step; a hidden view catches up when shown
    const bool was = rebuilding_;
    rebuilding_ = true;
    step_->setRange(int(live_.front().first), int(live_.back().first));
    rebuilding_ = was;
    stale_ = stale_ || latest_->isChecked() || !recorded_;
  }
}

void TimelineView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) rebuild();
}

void TimelineView::clear() {
  saved_.clear();
  live_.clear();
  runId_ = 0;
  forgetCodecRuns();
  latest_->setChecked(true);
  rebuild();
}

std::vector<int64_t> TimelineView::steps() const {
  std::vector<int64_t> out;
  for (const auto& r : saved_) out.push_back(r.step);
  for (const auto& [s, t] : live_) out.push_back(s);
  return out;
}

int64_t TimelineView::step() const {
  return recorded_ ? step_->value() : 0;
}

void TimelineView::showStep(int64_t step) {
  const auto all = steps();
  latest_->setChecked(!all.empty() && step == all.back());
  step_->setValue(int(step));
  rebuild();
}

void TimelineView::setWhatIf(const RetimeNetwork& network, double codecScale) {
  network_controls_->setNetwork(network);
  network_ = network;
  codec_->setValue(codecScale);
  codecScale_ = codecScale;
  rebuild();
}

void TimelineView::setCodecRuns(const std::vector<std::pair<int64_t, QString>>& runs, TraceLoader load) {
  forgetCodecRuns();
  loadTraces_ = std::move(load);
  const bool was = rebuilding_;
  rebuilding_ = true;
  for (const auto& [id, label] : runs)
    if (id != runId_) codecRuns_->addItem(tr("codec of %1").arg(label), QVariant::fromValue<qlonglong>(id));
  codecRuns_->setVisible(codecRuns_->count() > 1 && loadTraces_);
  rebuilding_ = was;
  rebuild();
}

void TimelineView::forgetCodecRuns() {  // another run's view: the caller offers its runs again
  const bool was = rebuilding_;
  rebuilding_ = true;
  codecRuns_->clear();
  codecRuns_->addItem(tr("its own codec"), QVariant::fromValue<qlonglong>(0));
  codecRuns_->setVisible(false);
  rebuilding_ = was;
  loadTraces_ = nullptr;
  codecRunId_ = 0;
  codecTraces_.clear();
}

void TimelineView::setCodecRun(int64_t runId) {
  codecRunId_ = 0;
  codecTraces_.clear();
  const int index = codecRuns_->findData(QVariant::fromValue<qlonglong>(runId));
  if (runId != 0 && index > 0 && loadTraces_) {
    try {
      codecTraces_ = loadTraces_(runId);
      if (!codecTraces_.empty()) codecRunId_ = runId;
    } catch (const std::exception&) {  // said below: the run offers no codec to try
    }
  }
  const bool was = rebuilding_;
  rebuilding_ = true;
  codecRuns_->setCurrentIndex(codecRunId_ ? index : 0);
  rebuilding_ = was;
  rebuild();
  if (runId != 0 && codecRunId_ == 0)
    summary_->setText(tr("Run %1 saved no step traces, so its codec cannot be tried here.").arg(runId) +
                      QStringLiteral("<br><br>") + summary_->text());
}

std::shared_ptr<const StepTrace> TimelineView::traceOf(int64_t step) const {
  for (const auto& [s, t] : live_)
    if (s == step) return t;
  for (const auto& r : saved_)
    if (r.step == step) return std::make_shared<const StepTrace>(decodeTrace(r.trace));
  return nullptr;
}

void TimelineView::rebuild() {
  rebuilding_ = true;
  stale_ = false;
  const auto all = steps();
  recorded_.reset();
  whatIf_.reset();
  error_.clear();
  export_->setEnabled(!saved_.empty() || !live_.empty());
  if (all.empty()) {
    step_->setRange(0, 0);
    chart_->setBands({});
    summary_->setText(tr("No step traces: the timeline appears with the first step (runs saved before traces were "
                         "kept have none)."));
    rebuilding_ = false;
    return;
  }
  step_->setRange(int(all.front()), int(all.back()));
  int64_t want = latest_->isChecked() ? all.back() : step_->value();
  if (!std::binary_search(all.begin(), all.end(), want))  // a step not saved: the nearest one before it
    want = *std::prev(std::upper_bound(all.begin(), all.end(), std::max(want, all.front())));
  step_->setValue(int(want));
  try {
    const auto trace = traceOf(want);
    recorded_ = timelineOf(*trace);
    std::vector<GanttBand> bands;
    if (wall_->isChecked() && recorded_->wall_s > 0)
      bands.push_back(wallBand(*recorded_, tr("Step %1 on this machine's wall clock: %2 (emulated: %3)")
                                               .arg(want)
                                               .arg(formatMs(recorded_->wall_s), formatMs(recorded_->step_s))));
    else
      bands.push_back(emulatedBand(
          *recorded_, tr("Step %1 as recorded (%2): %3%4")
                          .arg(want)
                          .arg(describeNetwork(recorded_->model), formatMs(recorded_->step_s))
                          .arg(wall_->isChecked() ? tr(" (no wall-clock times kept for this step: "
                                                       "telemetry.timeline_every sets which steps keep them)")
                                                  : QString())));
    if (!wall_->isChecked() && (!network_.empty() || codecScale_ != 1 || codecRunId_)) {
      QString codec = codecScale_ != 1 ? tr(", codec time x%1").arg(codecScale_) : QString();
      StepTrace swapped = *trace;
      if (codecRunId_) {
        const TraceRow& other = codecStepFor(codecTraces_, want);
        swapped = withCodecOf(*trace, decodeTrace(other.trace));
        codec += tr(", the codec of run %1 at step %2").arg(codecRunId_).arg(other.step);
      }
      whatIf_ = timelineOf(swapped, network_.applyTo(trace->model), CodecScale{codecScale_, codecScale_});
      bands.push_back(emulatedBand(
          *whatIf_,
          tr("What if (%1%2): %3").arg(describeNetwork(whatIf_->model)).arg(codec).arg(formatMs(whatIf_->step_s))));
    }
    chart_->setBands(std::move(bands));
    summary_->setText(decompositionHtml(decompositionText()));
  } catch (const std::exception& e) {
    error_ = tr("Step %1's trace cannot be shown: %2").arg(want).arg(QString::fromStdString(e.what()));
    chart_->setBands({});
    summary_->setText(error_.toHtmlEscaped());
  }
  rebuilding_ = false;
}

QString TimelineView::decompositionText() const {
  if (!recorded_) return error_;
  QString out = describeTimeline("recorded", *recorded_);
  if (whatIf_) {
    out += QLatin1Char('\n') + describeTimeline("what if", *whatIf_);
    const double change = recorded_->step_s > 0 ? whatIf_->step_s / recorded_->step_s - 1 : 0;
    out += QStringLiteral("\n  the step %1 by %2")
               .arg(change <= 0 ? tr("shortens") : tr("lengthens"), formatShare(std::abs(change)));
  }
  return out;
}

QString TimelineView::exportTrace(const QString& path) const {
  try {
    TraceExport options;
    options.network = network_;
    options.codec = CodecScale{codecScale_, codecScale_};
    std::vector<TraceRow> live;  // a live run's kept steps
    for (const auto& [step, trace] : live_) live.push_back({step, 0, encodeTrace(*trace)});
    AtomicFile out(path.toStdString());
    writeChromeTrace(runId_, saved_.empty() ? live : saved_, options, out.stream());
    out.commit();
    return {};
  } catch (const std::exception& e) {
    return tr("The trace was not written: %1").arg(QString::fromStdString(e.what()));
  }
}

}  // namespace ps::ui
