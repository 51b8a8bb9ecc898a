#include "app/ui/runs/BreakevenChart.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/SeedGroups.h"

#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace ps::ui {
namespace {

QString mbps(double v) {
  return v >= 1000 ? QStringLiteral("%1 Gbit/s").arg(v / 1000, 0, 'g', 3)
                   : QStringLiteral("%1 Mbit/s").arg(v, 0, 'g', 3);
}

}  // namespace

BreakevenChart::BreakevenChart(QWidget* parent)
    : QWidget(parent),
      plot_(new PlotWidget(tr("Break-even: time to target by bandwidth"), this)),
      summary_(new QLabel(this)) {
  plot_->setLogX(true);
  plot_->setLogY(true);
  plot_->setIgnoreOutliers(false);
  plot_->setAxisLabels(tr("Bandwidth (Mbit/s)"), tr("Emulated seconds to target"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_, 1);
  layout->addWidget(summary_);
}

void BreakevenChart::setRuns(std::shared_ptr<ps::RunStore> store, std::vector<const RunSeries*> runs, RunNames names,
                             double target, bool languageModels, const RetimeNetwork& network, bool groupSeeds) {
  // The same request again (a redraw for smoothing or the x axis): nothing to re-time.
  QString key = QStringLiteral("%1|%2|%3|%4|%5|%6")
                    .arg(target)
                    .arg(languageModels)
                    .arg(network.latency_ms ? *network.latency_ms : -1)
                    .arg(network.tcp ? int(*network.tcp) : -1)
                    .arg(network.shared_egress ? int(*network.shared_egress) : -1)
                    .arg(groupSeeds);
  for (const RunSeries* r : runs) key += QStringLiteral("|%1:%2").arg(r->info.id).arg(r->traces.size());
  if (store == store_ && key == key_ && (map_ || !notes_.isEmpty() || stale_)) {
    runs_ = std::move(runs);  // the same runs, reloaded
    names_ = std::move(names);
    return;
  }
  key_ = key;
  store_ = std::move(store);
  runs_ = std::move(runs);
  names_ = std::move(names);
  options_.target = languageModels ? target : target / 100;
  options_.network = network;
  options_.network.bandwidth_mbps.reset();
  groupSeeds_ = groupSeeds;
  stale_ = true;
  if (isVisible()) refresh();
}

void BreakevenChart::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) refresh();
}

void BreakevenChart::refresh() {
  stale_ = false;
  map_.reset();
  notes_.clear();
  std::vector<int64_t> ids;
  for (const RunSeries* r : runs_) {
    if (r->traces.empty())
      notes_ << tr("%1 is left out: it saved no step traces, so it cannot be re-timed.").arg(names_.of(*r));
    else
      ids.push_back(r->info.id);
  }
  if (store_ && !ids.empty()) {
    try {
      map_ = breakevenMap(*store_, ids, options_);
    } catch (const std::exception& e) {
      notes_ << tr("No break-even map: %1").arg(QString::fromStdString(e.what()));
    }
  }
  draw();
}

void BreakevenChart::draw() {
  plot_->clear();
  if (!map_) {
    summary_->setText(notes_.isEmpty() ? tr("Compare runs of one task that saved step traces to see where "
                                            "compression pays.")
                                       : notes_.join(QLatin1Char('\n')));
    return;
  }
  const BreakevenMap& m = *map_;
  std::map<int64_t, const RunSeries*> byId;
  for (const RunSeries* r : runs_) byId[r->info.id] = r;
  std::map<int64_t, const BreakevenRun*> mapped;
  for (const auto& r : m.runs) mapped[r.id] = &r;
  const auto line = [&](const BreakevenRun& r) {
    std::vector<QPointF> points;
    for (size_t b = 0; b < m.bandwidths.size(); ++b)
      if (r.seconds[b]) points.emplace_back(m.bandwidths[b], *r.seconds[b]);
    return points;
  };

  // A line per run, or per seed group where runs differ only in their seed.
  std::vector<const RunSeries*> drawn;
  for (const RunSeries* r : runs_)
    if (mapped.count(r->info.id)) drawn.push_back(r);
  for (const auto& group : groupSeeds_ ? seedGroups(drawn) : std::vector<std::vector<const RunSeries*>>{}) {
    if (group.size() < 2) continue;
    std::vector<std::vector<QPointF>> lines;
    for (const RunSeries* r : group) lines.push_back(line(*mapped[r->info.id]));
    const SeedBand band = seedBand(lines);
    const QString id = QStringLiteral("group%1").arg(group.front()->info.id);
    SeriesStyle style;
    style.color = runColor(group.front()->info.id);
    SeriesStyle edge = style;
    edge.faint = true, edge.legend = false, edge.fillTo = id + QStringLiteral("/hi");
    plot_->setSeries(id + QStringLiteral("/lo"), QString(), band.lo, edge);
    edge.fillTo.clear();
    plot_->setSeries(id + QStringLiteral("/hi"), QString(), band.hi, edge);
    plot_->setSeries(id, names_.groupOf(*group.front()), band.mean, style);
    for (const RunSeries* r : group) mapped.erase(r->info.id);  // drawn as the group
  }
  for (const RunSeries* r : drawn) {
    if (!mapped.count(r->info.id)) continue;
    const BreakevenRun& b = *mapped[r->info.id];
    SeriesStyle style;
    style.color = runColor(b.id);
    style.dashed = b.dense;
    plot_->setSeries(QStringLiteral("run%1").arg(b.id), names_.of(*r) + (b.dense ? tr(" (uncompressed)") : QString()),
                     line(b), style);
  }

  // Where a compressed run and an uncompressed one trade places, and what the target was.
  QStringList lines{tr("Time to %1 %2 (%3); a dashed line sends float32.")
                        .arg(QString::fromStdString(m.metric))
                        .arg(m.target, 0, 'g', 4)
                        .arg(QString::fromStdString(m.target_from))};
  const auto nameOf = [&](int64_t id) { return byId.count(id) ? names_.of(*byId[id]) : tr("run %1").arg(id); };
  std::vector<Marker> markers;
  for (const auto& p : m.pairs) {
    const QString a = nameOf(p.method), d = nameOf(p.dense);
    if (p.everywhere) lines << tr("%1 beats %2 at every bandwidth mapped.").arg(a, d);
    if (p.nowhere) lines << tr("%1 beats %2 at no bandwidth mapped.").arg(a, d);
    for (double c : p.crossings) {
      const bool below = p.wins_below && *p.wins_below == c;
      markers.push_back(
          {c, below ? tr("%1 beats %2 below %3").arg(a, d, mbps(c)) : tr("%1 and %2 cross at %3").arg(a, d, mbps(c))});
      lines << markers.back().label;
    }
  }
  plot_->setMarkers(std::move(markers));
  for (const auto& r : m.runs)
    if (!r.seconds.empty() && !r.seconds.front())
      lines << tr("%1 does not reach the target (%2).").arg(nameOf(r.id), QString::fromStdString(r.why));
  summary_->setText((lines + notes_).join(QLatin1Char('\n')));
}

QString BreakevenChart::summary() const {
  return summary_->text();
}

}  // namespace ps::ui
