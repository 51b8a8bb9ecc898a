#include "app/ui/LivePanel.h"
#include "engine/core/Metrics.h"
#include "engine/telemetry/StepMetrics.h"

#include "app/ui/charts/HeatmapWidget.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/RunSeries.h"
#include "engine/runs/config/BoundedJson.h"

#include <QDir>

#include <algorithm>
#include <QGridLayout>
#include <QRegularExpression>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

namespace ps::ui {
namespace {

constexpr int kRedrawMs = 33;        // ~30 Hz when painting is cheap
constexpr int kSlowestRedrawMs = 500;
constexpr double kPaintBudget = 0.10;  // fraction of one core that live chart painting may take

}  // namespace

LivePanel::LivePanel(QWidget* parent) : QWidget(parent) {
  canvas_ = new QWidget;
  grid_ = new QGridLayout(canvas_);
  grid_->setSpacing(6);
  auto* scroll = new QScrollArea;
  scroll->setWidget(canvas_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  timeline_ = new TimelineView;
  views_ = new QTabWidget;
  views_->setDocumentMode(true);
  views_->addTab(scroll, tr("Charts"));
  views_->addTab(timeline_, tr("Timeline"));
  views_->setTabToolTip(1, tr("Where a step's time went, micro-batch by micro-batch, and what if"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(views_);
  redraw_.setInterval(kRedrawMs);
  redraw_.setTimerType(Qt::CoarseTimer);
  connect(&redraw_, &QTimer::timeout, this, &LivePanel::flush);
  reset(nlohmann::json::object());
}

PlotWidget* LivePanel::addPlot(const QString& title, const QString& yLabel, bool logY) {
  auto* plot = new PlotWidget(title);
  plot->setAxisLabels(tr("Step"), yLabel);
  plot->setLogY(logY);
  plot->setMinimumHeight(220);
  const int index = int(plots_.size());
  grid_->addWidget(plot, index / 2, index % 2);
  plots_[title] = plot;
  // Linked zoom: a zoom on one chart shows the same steps on all of them.
  connect(plot, &PlotWidget::xRangeChanged, this, [this, plot](double lo, double hi) {
    for (auto& [_, other] : plots_)
      if (other != plot) other->setXRange(std::isnan(lo) ? std::nullopt : std::optional(std::pair(lo, hi)));
  });
  return plot;
}

void LivePanel::reset(const nlohmann::json& config) {
  redraw_.stop();
  for (auto& [_, p] : plots_) delete p;
  for (auto* h : heatmaps_) delete h;
  plots_.clear();
  heatmaps_.clear();
  routes_.clear();
  pending_.clear();
  pendingHistograms_.clear();
  pendingMarkers_.clear();
  linkMethods_.clear();
  storedRun_.reset();
  lastStep_ = 0;
  timeline_->clear();
  paintMark_ = PlotWidget::paintSecondsTotal();
  frameCost_ = 0;
  redraw_.setInterval(kRedrawMs);

  // The chart table's live charts for this task; the replicas' gradient charts only when there are replicas.
  const TaskKind kind = taskKind(config.value("task", std::string())).value_or(TaskKind::Classifier);
  const bool replicas = config.contains("parallel") && config["parallel"].value("replicas", 1) > 1;
  charts_.clear();
  colours_.clear();
  for (const ChartSpec& spec : ps::charts()) {
    if (!spec.live() || !spec.shows(kind)) continue;
    if (!replicas && !spec.linkLeaf.empty() && spec.directions == std::vector<Direction>{Direction::Gradients}) continue;
    PlotWidget* plot = addPlot(tr(spec.title.c_str()), tr(spec.unit.c_str()), spec.logY);
    charts_.emplace_back(&spec, plot);
    for (const ChartSeries& s : spec.series)
      route(s.key, plot, tr(s.label.c_str()), colours_.of(tr(s.label.c_str()), {plot}), s.dashed, spec.cumulative,
            spec.scale);
  }

  const int stages = config.contains("pipeline") ? config["pipeline"].value("stages", 1) : 0;
  const int row = (int(plots_.size()) + 1) / 2;
  for (int s = 0; s < stages; ++s) {
    auto* h = new HeatmapWidget(tr("Gradients, stage %1").arg(s));
    h->setMinimumHeight(200);
    grid_->addWidget(h, row + s / 2, s % 2);
    heatmaps_.push_back(h);
  }
  redraw_.start();
}

void LivePanel::route(const std::string& key, PlotWidget* plot, const QString& label, const QColor& colour, bool dashed,
                      bool cumulative, double scale) {
  Route r{plot, QString::fromStdString(key), label, colour, dashed, cumulative, scale};
  routes_[key].push_back(r);
}

// Link keys are routed the first time they are seen (the number of links follows the stage count), to every live
// chart that draws their leaf for their direction; a key no chart draws is remembered with no route.
std::vector<LivePanel::Route>& LivePanel::routesFor(const std::string& key) {
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  auto& out = routes_[key];
  const auto link = metric::parseLinkKey(key);
  if (!link) return out;
  const int b = link->boundary;
  const bool grads = link->direction == Direction::Gradients;
  const QString name = grads ? tr("stage %1 grads").arg(b)
                             : tr("link %1 %2").arg(b).arg(link->direction == Direction::Backward ? tr("bwd") : tr("fwd"));
  // The link's colour avoids those of every chart any of its keys goes into, whichever key comes first.
  std::vector<const void*> charts;
  bool drawn = false;
  for (const auto& [spec, plot] : charts_) {
    if (!spec->takes(link->direction) || spec->linkLeaf.empty()) continue;
    charts.push_back(plot);
    drawn = drawn || link->leaf == spec->linkLeaf || link->leaf == spec->linkDashed;
  }
  if (!drawn) return out;                           // a leaf no chart draws
  const QColor colour = colours_.of(name, charts);  // its raw bytes, dashed, in the same colour
  for (const auto& [spec, plot] : charts_) {
    if (!spec->takes(link->direction)) continue;
    if (link->leaf == spec->linkLeaf) out.push_back(Route{plot, QString::fromStdString(key), name, colour, false});
    else if (link->leaf == spec->linkDashed)
      out.push_back(Route{plot, QString::fromStdString(key), name + " " + tr(spec->linkDashedLabel.c_str()), colour, true});
  }
  return out;
}

void LivePanel::queue(const MetricPoint& point) { pending_.push_back(point); }

void LivePanel::addStep(const StepRecord& step) {
  std::vector<MetricPoint> points;
  stepMetrics(step, points);
  for (const auto& p : points) queue(p);
  for (const auto& l : step.links)
    linkMethods_[metric::linkName(l.boundary, l.direction)] = l.method;
  lastStep_ = step.step;
  timeline_->addTrace(step.step, step.trace);
}

void LivePanel::addEval(const EvalRecord& eval) {
  std::vector<MetricPoint> points;
  evalMetrics(eval, points);
  for (const auto& p : points) queue(p);
}

void LivePanel::addHistogram(const HistogramRecord& histogram) { pendingHistograms_.push_back(histogram); }

void LivePanel::addEvent(const EventRecord& event) {
  if (marksCharts(event.type()))
    pendingMarkers_.push_back(Marker{double(event.step), settingLabel(event.kind, event.detail.dump())});
}

QString LivePanel::showStoredRun(const RunStore& store, int64_t id) {
  std::optional<RunInfo> info;
  std::vector<MetricPoint> metrics;
  std::vector<HistogramRow> histograms;
  std::vector<EventRow> events;
  try {
    info = store.run(id);
    if (!info) return tr("Run %1 is not in the store %2.").arg(id).arg(QString::fromStdString(store.path()));
    metrics = store.metrics(id);  // in step order within each key, as the charts take them
    histograms = store.histograms(id);
    events = store.events(id);
  } catch (const std::exception& e) {
    return tr("Could not read run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
  }
  // Settings that cannot be read still leave the metrics to show, on the default task's charts.
  nlohmann::json config = parseJsonOrDiscarded(info->config_json);
  reset(config.is_object() ? config : nlohmann::json::object());
  redraw_.stop();  // nothing more arrives
  for (const MetricPoint& p : metrics) lastStep_ = std::max(lastStep_, p.step);
  pending_ = std::move(metrics);
  for (auto& h : histograms)
    pendingHistograms_.push_back(HistogramRecord{h.step, std::move(h.name), h.lo, h.hi, std::move(h.counts)});
  for (const EventRow& e : events)
    if (marksCharts(eventKindOf(e.kind))) pendingMarkers_.push_back(Marker{double(e.step), settingLabel(e.kind, e.detail_json)});
  try {
    timeline_->setTraces(id, store.traces(id));
    // What if this run's links had used another run's codec: the store's other runs, their traces read when picked.
    std::vector<std::pair<int64_t, QString>> others;
    for (const auto& r : store.listRuns())
      others.emplace_back(r.id, tr("run %1 (%2)").arg(r.id).arg(QString::fromStdString(r.name)));
    timeline_->setCodecRuns(
        others, [path = store.path()](int64_t run) { return RunStore(path, StoreAccess::ReadOnly).traces(run); });
  } catch (const std::exception&) {  // the charts still show; the timeline says it has no traces
    timeline_->setTraces(id, {});
  }
  storedRun_ = std::move(info);
  flush();
  return {};
}

void LivePanel::flush() {
  const bool frame = !pending_.empty() || !pendingHistograms_.empty() || !pendingMarkers_.empty();
  if (!frame) return;
  ++frames_;
  // What the previous frame's paints cost, smoothed; the next interval keeps painting within the budget.
  const double painted = PlotWidget::paintSecondsTotal();
  const double cost = painted - paintMark_;
  paintMark_ = painted;
  frameCost_ = frameCost_ == 0 ? cost : 0.8 * frameCost_ + 0.2 * cost;
  redraw_.setInterval(std::clamp(int(1000.0 * frameCost_ / kPaintBudget), kRedrawMs, kSlowestRedrawMs));
  for (const MetricPoint& p : pending_) {
    for (Route& r : routesFor(p.key)) {
      if (!r.plot->hasSeries(r.id)) {
        SeriesStyle style{r.colour};
        style.dashed = r.dashed;
        r.plot->setSeries(r.id, r.label, {}, style);
      }
      r.total += p.value * r.scale;
      r.plot->appendPoint(r.id, QPointF(double(p.step), r.cumulative ? r.total : p.value * r.scale));
    }
  }
  pending_.clear();
  for (const HistogramRecord& h : pendingHistograms_) {
    const std::optional<int> stage = metric::gradHistogramStage(h.name);
    if (stage && *stage < int(heatmaps_.size())) heatmaps_[*stage]->addHistogram(h.step, h.lo, h.hi, h.counts);
  }
  pendingHistograms_.clear();
  for (const Marker& m : pendingMarkers_)
    for (auto& [_, plot] : plots_) plot->addMarker(m);
  pendingMarkers_.clear();
}

std::vector<PlotWidget*> LivePanel::plots() const {
  std::vector<PlotWidget*> out;
  for (auto& [_, p] : plots_) out.push_back(p);
  return out;
}

int LivePanel::exportPng(const QString& dir) {
  QDir().mkpath(dir);
  int written = 0;
  for (auto& [title, p] : plots_) written += p->exportPng(dir + "/" + chartFileStem(title) + ".png") ? 1 : 0;
  for (auto* h : heatmaps_) written += h->exportPng(dir + "/" + chartFileStem(h->title()) + ".png") ? 1 : 0;
  return written;
}

}  // namespace ps::ui
