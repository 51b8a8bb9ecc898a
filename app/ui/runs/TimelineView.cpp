#include "app/ui/runs/TimelineView.h"

#include "app/ui/charts/ExportSettings.h"
#include "app/ui/runs/NetworkControls.h"
#include "engine/core/AtomicFile.h"
#include "engine/runs/trace/StepTimelines.h"

#include <QCheckBox>
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
#include <map>
#include <tuple>

namespace ps::ui {
namespace {

// The bar kinds of engine/core/Timeline.h in their order, then the wire.
const std::vector<std::pair<QString, QColor>>& kinds() {
  static const std::vector<std::pair<QString, QColor>> k = {
      {QStringLiteral("forward"), QColor(31, 119, 180)},   {QStringLiteral("backward"), QColor(255, 127, 14)},
      {QStringLiteral("update"), QColor(140, 86, 75)},     {QStringLiteral("compute"), QColor(127, 127, 127)},
      {QStringLiteral("encode"), QColor(44, 160, 44)},     {QStringLiteral("decode"), QColor(148, 103, 189)},
      {QStringLiteral("exchange"), QColor(227, 119, 194)}, {QStringLiteral("idle"), QColor(224, 224, 224)},
      {QStringLiteral("on the wire"), QColor(23, 190, 207)}};
  return k;
}
constexpr int kWire = 8;

QString ms(double s) {
  return QString::number(s * 1e3, 'f', s < 0.01 ? 3 : 2) + QStringLiteral(" ms");
}

QString pct(double f) {
  return QString::number(100 * f, 'f', 1) + QLatin1Char('%');
}

QString laneName(const TimelineLane& l, int replicas) {
  return QStringLiteral("stage %1").arg(l.stage) + (replicas > 1 ? QStringLiteral(" r%1").arg(l.replica) : QString());
}

QString linkName(int boundary, bool forward, int replica, int replicas) {
  return QStringLiteral("link %1 %2").arg(boundary).arg(forward ? QStringLiteral("fwd") : QStringLiteral("bwd")) +
         (replicas > 1 ? QStringLiteral(" r%1").arg(replica) : QString());
}

QString networkText(const LinkModel& m) {
  return QStringLiteral("%1 Mbit/s, %2 ms").arg(m.bandwidth_mbps).arg(m.latency_ms) +
         (m.tcp ? QStringLiteral(", TCP") : QString()) +
         (m.shared_egress ? QStringLiteral(", one interface per stage") : QString());
}

GanttBand bandOf(const Timeline& t, const QString& title) {
  GanttBand band;
  band.title = title;
  const StepDecomposition d = decompose(t);
  for (const auto& lane : t.lanes) {
    GanttRow row;
    row.name = laneName(lane, t.replicas);
    for (const auto& b : lane.bars) {
      GanttBar bar{b.start, b.end, int(b.kind)};
      QString what = QString::fromLatin1(barKindName(b.kind));
      if (b.kind == TimelineBar::Idle) what = QStringLiteral("waiting (%1)").arg(QString::fromLatin1(barCauseName(b.cause)));
      if (b.microbatch >= 0) what += QStringLiteral(", micro-batch %1").arg(b.microbatch);
      bar.tip = row.name + QStringLiteral(": ") + what + QStringLiteral("\n%1 to %2 (%3)")
                                                              .arg(ms(b.start), ms(b.end), ms(b.end - b.start));
      if (b.message >= 0) {
        const auto& m = t.messages[size_t(b.message)];
        bar.tip += QStringLiteral("\n%1 bytes").arg(m.bytes) +
                   (m.dense ? QStringLiteral(" (float32: %1)").arg(m.dense) : QString());
      }
      row.bars.push_back(bar);
    }
    band.rows.push_back(row);
  }
  // A row per link direction: each message's time from its first byte on the wire to its arrival.
  std::map<std::tuple<int, int, int>, int> linkRow;
  for (const auto& m : t.messages) {
    const auto key = std::make_tuple(m.boundary, m.forward ? 0 : 1, m.replica);
    if (!linkRow.count(key)) {
      linkRow[key] = 0;
    }
  }
  for (auto& [key, row] : linkRow) {
    row = int(band.rows.size());
    GanttRow r;
    r.name = linkName(std::get<0>(key), std::get<1>(key) == 0, std::get<2>(key), t.replicas);
    band.rows.push_back(r);
  }
  std::map<std::pair<int, int>, bool> costly;  // link direction -> its codec costs more than it saves
  for (const auto& c : d.links) costly[{c.boundary, c.forward ? 0 : 1}] = c.costs_more();
  for (const auto& m : t.messages) {
    auto& row = band.rows[size_t(linkRow[std::make_tuple(m.boundary, m.forward ? 0 : 1, m.replica)])];
    GanttBar bar{m.leave, m.arrival, kWire};
    bar.outlined = costly[{m.boundary, m.forward ? 0 : 1}];
    bar.tip = row.name + QStringLiteral(": %1 %2, %3 bytes\nready %4, on the wire %5 to %6, arrives %7")
                             .arg(m.forward ? QStringLiteral("activation") : QStringLiteral("gradient"))
                             .arg(m.microbatch)
                             .arg(m.bytes)
                             .arg(ms(m.ready), ms(m.leave), ms(m.wire_end), ms(m.arrival));
    row.bars.push_back(bar);
    band.arrows.push_back({int(m.from), int(m.to), m.ready, m.arrival});
  }
  return band;
}

// The step where it ran on this machine's wall clock: each lane's measured events (the gaps are its waits), each
// message in flight from the end of its encode to the start of its decode.
GanttBand wallBandOf(const Timeline& t, const QString& title) {
  GanttBand band;
  band.title = title;
  std::vector<std::pair<double, double>> flight(t.messages.size(), {-1, -1});
  for (const auto& lane : t.lanes) {
    GanttRow row;
    row.name = laneName(lane, t.replicas);
    for (const auto& b : lane.wall) {
      GanttBar bar{b.start, b.end, int(b.kind)};
      bar.tip = row.name + QStringLiteral(": ") + QString::fromLatin1(barKindName(b.kind)) +
                (b.microbatch >= 0 ? QStringLiteral(", micro-batch %1").arg(b.microbatch) : QString()) +
                QStringLiteral("\nran %1 to %2 (%3) on this machine").arg(ms(b.start), ms(b.end), ms(b.end - b.start));
      row.bars.push_back(bar);
      if (b.message >= 0 && b.kind == TimelineBar::Encode) flight[size_t(b.message)].first = b.end;
      if (b.message >= 0 && b.kind == TimelineBar::Decode) flight[size_t(b.message)].second = b.start;
    }
    band.rows.push_back(row);
  }
  std::map<std::tuple<int, int, int>, int> linkRow;
  for (const auto& m : t.messages) linkRow.emplace(std::make_tuple(m.boundary, m.forward ? 0 : 1, m.replica), 0);
  for (auto& [key, row] : linkRow) {
    row = int(band.rows.size());
    band.rows.push_back({linkName(std::get<0>(key), std::get<1>(key) == 0, std::get<2>(key), t.replicas), {}});
  }
  for (size_t k = 0; k < t.messages.size(); ++k) {
    const auto& m = t.messages[k];
    const auto [leave, arrive] = flight[k];
    if (leave < 0 || arrive < 0) continue;
    auto& row = band.rows[size_t(linkRow[std::make_tuple(m.boundary, m.forward ? 0 : 1, m.replica)])];
    GanttBar bar{leave, std::max(leave, arrive), kWire};
    bar.tip = row.name + QStringLiteral(": %1 %2, %3 bytes\nsent %4, decoded from %5")
                             .arg(m.forward ? QStringLiteral("activation") : QStringLiteral("gradient"))
                             .arg(m.microbatch)
                             .arg(m.bytes)
                             .arg(ms(leave), ms(arrive));
    row.bars.push_back(bar);
    band.arrows.push_back({int(m.from), int(m.to), leave, std::max(leave, arrive)});
  }
  return band;
}

QString describe(const char* title, const Timeline& t) {
  const StepDecomposition d = decompose(t);
  QString out =
      QStringLiteral(
          "%1 (%2): step %3; bubble %4 (ideal %5 for %6 stages, %7 micro-batches); critical "
          "path (links %8): %9")
          .arg(QString::fromLatin1(title), networkText(t.model), ms(t.step_s), pct(d.bubble), pct(d.ideal_bubble))
          .arg(t.stages)
          .arg(t.microbatches)
          .arg(pct(d.critical_links_share), QString::fromStdString(d.critical_summary));
  for (const auto& c : d.links) {
    out += QStringLiteral("\n  link %1 %2: codec %3 against %4 of wire saved")
               .arg(c.boundary)
               .arg(c.forward ? QStringLiteral("fwd") : QStringLiteral("bwd"), ms(c.codec_s), ms(c.saved_s));
    if (c.costs_more()) out += QStringLiteral(" (costs more than it saves)");
  }
  return out;
}

QString html(const QString& text) {
  QString out;
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    const QString escaped = line.toHtmlEscaped();
    if (line.endsWith(QStringLiteral("(costs more than it saves)")))
      out += QStringLiteral("<span style='color:#d62728'>%1</span><br>").arg(escaped);
    else if (!line.startsWith(QLatin1Char(' ')))  // a timeline's headline
      out += QStringLiteral("<p style='margin-top:6px'><b>%1</b><br>").arg(escaped);
    else
      out += escaped + QStringLiteral("<br>");
  }
  return out;
}

}  // namespace

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
  export_ = new QPushButton(tr("Export trace..."));
  export_->setToolTip(tr("Saved steps as a Chrome/Perfetto trace file (ui.perfetto.dev, chrome://tracing)"));
  chart_ = new GanttWidget;
  chart_->setKinds(kinds());
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
      bands.push_back(wallBandOf(*recorded_, tr("Step %1 on this machine's wall clock: %2 (emulated: %3)")
                                                 .arg(want)
                                                 .arg(ms(recorded_->wall_s), ms(recorded_->step_s))));
    else
      bands.push_back(
          bandOf(*recorded_, tr("Step %1 as recorded (%2): %3%4")
                                 .arg(want)
                                 .arg(networkText(recorded_->model), ms(recorded_->step_s))
                                 .arg(wall_->isChecked() ? tr(" (saved without wall-clock times)") : QString())));
    if (!wall_->isChecked() && (!network_.empty() || codecScale_ != 1)) {
      whatIf_ = timelineOf(*trace, network_.applyTo(trace->model), CodecScale{codecScale_, codecScale_});
      bands.push_back(bandOf(*whatIf_, tr("What if (%1%2): %3")
                                           .arg(networkText(whatIf_->model))
                                           .arg(codecScale_ != 1 ? tr(", codec time x%1").arg(codecScale_) : QString())
                                           .arg(ms(whatIf_->step_s))));
    }
    chart_->setBands(std::move(bands));
    summary_->setText(html(decompositionText()));
  } catch (const std::exception& e) {
    error_ = tr("Step %1's trace cannot be shown: %2").arg(want).arg(QString::fromStdString(e.what()));
    chart_->setBands({});
    summary_->setText(error_.toHtmlEscaped());
  }
  rebuilding_ = false;
}

QString TimelineView::decompositionText() const {
  if (!recorded_) return error_;
  QString out = describe("recorded", *recorded_);
  if (whatIf_) {
    out += QLatin1Char('\n') + describe("what if", *whatIf_);
    const double change = recorded_->step_s > 0 ? whatIf_->step_s / recorded_->step_s - 1 : 0;
    out += QStringLiteral("\n  the step %1 by %2").arg(change <= 0 ? tr("shortens") : tr("lengthens"),
                                                     pct(std::abs(change)));
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
