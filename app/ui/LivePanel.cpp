#include "app/ui/LivePanel.h"

#include "app/ui/charts/HeatmapWidget.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/RunSeries.h"
#include "engine/session/RunStoreSink.h"

#include <QDir>

#include <algorithm>
#include <QGridLayout>
#include <QRegularExpression>
#include <QScrollArea>
#include <QVBoxLayout>

namespace ps::ui {
namespace {

constexpr int kRedrawMs = 33;        // ~30 Hz when painting is cheap
constexpr int kSlowestRedrawMs = 500;
constexpr double kPaintBudget = 0.04;  // fraction of one core that live chart painting may take

// "link1/bwd/wire_bytes" -> boundary 1, direction 1; "link0/grad/..." -> stage 0's replicas' weight-gradient
// exchange, direction 2; false for other keys.
bool parseLinkKey(const std::string& key, int& boundary, int& direction, std::string& leaf) {
  static const QRegularExpression re(QStringLiteral("^link(\\d+)/(fwd|bwd|grad)/(.+)$"));
  const auto m = re.match(QString::fromStdString(key));
  if (!m.hasMatch()) return false;
  boundary = m.captured(1).toInt();
  direction = m.captured(2) == QLatin1String("bwd") ? 1 : m.captured(2) == QLatin1String("grad") ? 2 : 0;
  leaf = m.captured(3).toStdString();
  return true;
}

}  // namespace

LivePanel::LivePanel(QWidget* parent) : QWidget(parent) {
  canvas_ = new QWidget;
  grid_ = new QGridLayout(canvas_);
  grid_->setSpacing(6);
  auto* scroll = new QScrollArea;
  scroll->setWidget(canvas_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  redraw_.setInterval(kRedrawMs);
  redraw_.setTimerType(Qt::CoarseTimer);
  connect(&redraw_, &QTimer::timeout, this, &LivePanel::flush);
  reset(nlohmann::json::object());
}

PlotWidget* LivePanel::addPlot(const QString& title, const QString& yLabel, bool logY) {
  auto* plot = new PlotWidget(title);
  plot->setAxisLabels(tr("step"), yLabel);
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
  cumulativeRaw_ = cumulativeWire_ = 0;
  lastStep_ = 0;
  paintMark_ = PlotWidget::paintSecondsTotal();
  frameCost_ = 0;
  redraw_.setInterval(kRedrawMs);

  const bool lm = config.value("task", std::string()) == "brown_lm";
  lossPlot_ = addPlot(tr("Loss"), tr("loss"));
  metricPlot_ = addPlot(lm ? tr("Perplexity") : tr("Accuracy"), lm ? tr("perplexity") : tr("accuracy"), lm);
  bytesPlot_ = addPlot(tr("Bytes per step"), tr("bytes"), true);
  cumulativePlot_ = addPlot(tr("Cumulative bytes"), tr("bytes"));
  errorPlot_ = addPlot(tr("Compression error"), tr("‖x̂ − x‖ / ‖x‖"));
  splitPlot_ = addPlot(tr("Step time split"), tr("seconds"));
  timePlot_ = addPlot(tr("Step time: measured and emulated network"), tr("seconds"));

  route("train/loss", lossPlot_, tr("train"), 0);
  route("eval/loss", lossPlot_, tr("eval"), 1);
  route("eval/loss_uncompressed", lossPlot_, tr("eval, uncompressed"), 2, true);
  route("train/accuracy", metricPlot_, tr("train"), 0);
  route("eval/accuracy", metricPlot_, tr("eval"), 1);
  route("eval/accuracy_uncompressed", metricPlot_, tr("eval, uncompressed"), 2, true);
  route("eval/perplexity", metricPlot_, tr("eval"), 1);
  route("eval/perplexity_uncompressed", metricPlot_, tr("eval, uncompressed"), 2, true);
  route("time/compute_s", splitPlot_, tr("compute"), 0);
  route("time/codec_s", splitPlot_, tr("compression"), 1);
  route("time/link_s", splitPlot_, tr("link (modelled)"), 2);
  route("time/step_s", timePlot_, tr("measured step"), 0);
  route("time/emulated_step_s", timePlot_, tr("emulated at the link's bandwidth"), 3);

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

void LivePanel::route(const std::string& key, PlotWidget* plot, const QString& label, int colour, bool dashed) {
  routes_[key] = Route{plot, QString::fromStdString(key), label, colour, dashed};
}

// Link keys are routed the first time they are seen: the number of links follows the stage count.
const LivePanel::Route* LivePanel::routeFor(const std::string& key) {
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second.plot ? &it->second : nullptr;
  int boundary = 0, direction = 0;
  std::string leaf;
  if (!parseLinkKey(key, boundary, direction, leaf)) return nullptr;
  const QString link = direction == 2 ? tr("stage %1 grads").arg(boundary)
                                      : tr("link %1 %2").arg(boundary).arg(direction ? tr("bwd") : tr("fwd"));
  const int colour = direction == 2 ? 16 + boundary : boundary * 2 + direction;
  if (leaf == "wire_bytes") route(key, bytesPlot_, link, colour);
  else if (leaf == "raw_bytes") route(key, bytesPlot_, link + tr(" raw"), colour, true);
  else if (leaf == "rel_error") route(key, errorPlot_, link, colour);
  else if (leaf == "rel_error_compensated") route(key, errorPlot_, link + tr(" compensated"), colour, true);
  else route(key, nullptr, {}, 0);  // not charted: remembered so the key is parsed once
  return routes_.at(key).plot ? &routes_.at(key) : nullptr;
}

void LivePanel::queue(const MetricPoint& point) { pending_.push_back(point); }

void LivePanel::addStep(const StepRecord& step) {
  std::vector<MetricPoint> points;
  RunStoreSink::stepMetrics(step, points);
  for (const auto& p : points) queue(p);
  for (const auto& l : step.links)
    linkMethods_["link" + std::to_string(l.boundary) + "/" + directionName(l.direction)] = l.method;
  lastStep_ = step.step;
}

void LivePanel::addEval(const EvalRecord& eval) {
  std::vector<MetricPoint> points;
  RunStoreSink::evalMetrics(eval, points);
  for (const auto& p : points) queue(p);
}

void LivePanel::addHistogram(const HistogramRecord& histogram) { pendingHistograms_.push_back(histogram); }

void LivePanel::addEvent(const EventRecord& event) {
  if (event.kind == "setting" || event.kind == "pause" || event.kind == "resume")
    pendingMarkers_.push_back(Marker{double(event.step), settingLabel(event.kind, event.detail.dump())});
}

void LivePanel::flush() {
  const bool frame = !pending_.empty() || !pendingHistograms_.empty() || !pendingMarkers_.empty();
  if (!frame) return;
  // What the previous frame's paints cost, smoothed; the next interval keeps painting within the budget.
  const double painted = PlotWidget::paintSecondsTotal();
  const double cost = painted - paintMark_;
  paintMark_ = painted;
  frameCost_ = frameCost_ == 0 ? cost : 0.8 * frameCost_ + 0.2 * cost;
  redraw_.setInterval(std::clamp(int(1000.0 * frameCost_ / kPaintBudget), kRedrawMs, kSlowestRedrawMs));
  for (const MetricPoint& p : pending_) {
    const double x = double(p.step);
    if (p.key == "bytes/raw" || p.key == "bytes/wire") {
      double& total = p.key == "bytes/raw" ? cumulativeRaw_ : cumulativeWire_;
      total += p.value;
      const bool raw = p.key == "bytes/raw";
      const QString id = QString::fromStdString(p.key);
      if (!cumulativePlot_->hasSeries(id))
        cumulativePlot_->setSeries(id, raw ? tr("raw (float32)") : tr("sent on the wire"), {},
                                   SeriesStyle{paletteColor(raw ? 7 : 0), false, raw});
      cumulativePlot_->appendPoint(id, QPointF(x, total));
      continue;
    }
    const Route* r = routeFor(p.key);
    if (!r) continue;
    if (!r->plot->hasSeries(r->id)) r->plot->setSeries(r->id, r->label, {}, SeriesStyle{paletteColor(r->colour), false, r->dashed});
    r->plot->appendPoint(r->id, QPointF(x, p.value));
  }
  pending_.clear();
  for (const HistogramRecord& h : pendingHistograms_) {
    const QString name = QString::fromStdString(h.name);
    if (!name.startsWith(QLatin1String("grad/stage"))) continue;
    bool ok = false;
    const int stage = name.mid(10).toInt(&ok);
    if (ok && stage >= 0 && stage < int(heatmaps_.size())) heatmaps_[stage]->addHistogram(h.step, h.lo, h.hi, h.counts);
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
