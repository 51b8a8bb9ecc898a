#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/SeedGroups.h"
#include "app/ui/runs/TargetTable.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/charts/Smoothing.h"
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/RunChecklist.h"
#include "app/ui/runs/SettingsDiffView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {
constexpr int kColumns = 2;  // charts per grid row
QString seriesId(qint64 id) {
  return QStringLiteral("run%1").arg(id);
}
QString groupSeriesId(qint64 firstRun) {
  return QStringLiteral("group%1").arg(firstRun);
}
QString runLabel(const RunSeries& r) {
  return r.info.name.empty() ? QStringLiteral("run %1").arg(r.info.id) : QString::fromStdString(r.info.name);
}
// Smoothing is for dense series, a value at most steps. Evaluations (a few per run) are drawn as measured: smoothed,
// the line would end well below the run's real final accuracy.
bool dense(size_t points, const RunSeries& run) {
  int64_t steps = 0;
  for (const auto& [key, series] : run.metrics)
    if (!series.empty()) steps = std::max(steps, series.back().step);
  return 2 * int64_t(points) >= steps;
}
}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), diff_(new SettingsDiffView(this)), target_(new TargetTable(this)) {
  buildControls();
}

CompareView::~CompareView() = default;

void CompareView::buildControls() {
  axisCombo_ = new QComboBox(this);
  for (XAxis a : {XAxis::Step, XAxis::WallTime, XAxis::EmulatedTime, XAxis::Bytes})
    axisCombo_->addItem(xAxisLabel(a), int(a));
  connect(axisCombo_, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { setXAxis(XAxis(axisCombo_->itemData(i).toInt())); });
  smoothSlider_ = new QSlider(Qt::Horizontal, this);
  smoothSlider_->setRange(0, 99);
  smoothSlider_->setToolTip(tr("Debiased exponential moving average; the raw line stays faint behind"));
  smoothLabel_ = new QLabel(this);
  smoothLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.00")) + 4);
  connect(smoothSlider_, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  logCheck_ = new QCheckBox(tr("Log y"), this);
  connect(logCheck_, &QCheckBox::toggled, this, &CompareView::setLogY);
  metricCombo_ = new QComboBox(this);
  metricCombo_->setToolTip(
      tr("Any metric the runs recorded (per-link codec time, K, error, uncompressed "
         "evaluation, ...) as a chart of its own"));
  connect(metricCombo_, qOverload<int>(&QComboBox::activated), this, [this](int i) {
    if (i <= 0) return;
    if (!picked_.empty() && i == metricCombo_->count() - 1)
      removeMetricCharts();
    else
      addMetricChart(metricCombo_->itemText(i).toStdString());
  });
  groupCheck_ = new QCheckBox(tr("Group seeds"), this);
  groupCheck_->setToolTip(tr("Runs that differ only in their seed as one mean line with a min–max band"));
  connect(groupCheck_, &QCheckBox::toggled, this, &CompareView::setGroupSeeds);
  network_ = new NetworkControls(this);
  connect(network_, &NetworkControls::networkChanged, this, [this] {
    retimeRuns();
    redraw();
    Q_EMIT timeTargetChanged();
  });
  connect(target_, &TargetTable::targetChanged, this, &CompareView::timeTargetChanged);
  auto* pngButton = new QPushButton(tr("Export Charts"), this);
  pngButton->setToolTip(tr("Every chart as it is shown, one file each: PNG, or SVG and PDF as vectors for papers"));
  auto* formats = new QMenu(pngButton);
  for (const auto& [label, format] :
       {std::pair{tr("As PNG Images…"), ChartFormat::Png}, std::pair{tr("As SVG Vectors…"), ChartFormat::Svg},
        std::pair{tr("As PDF Documents…"), ChartFormat::Pdf}}) {
    const ChartFormat f = format;
    connect(formats->addAction(label), &QAction::triggered, this, [this, f] { exportAllDialog(f); });
  }
  pngButton->setMenu(formats);
  auto* csvButton = new QPushButton(tr("Export visible CSV…"), this);
  connect(csvButton, &QPushButton::clicked, this, &CompareView::exportVisibleCsvDialog);

  auto* controls = new QHBoxLayout;
  for (QWidget* w : QList<QWidget*>{new QLabel(tr("X axis:"), this), axisCombo_, new QLabel(tr("Smoothing:"), this),
                                    smoothSlider_, smoothLabel_, logCheck_, groupCheck_})
    controls->addWidget(w);
  controls->setStretchFactor(smoothSlider_, 1);
  controls->addStretch(1);
  controls->addWidget(metricCombo_);
  controls->addWidget(pngButton);
  controls->addWidget(csvButton);

  runList_ = new RunChecklist(this);
  connect(runList_, &RunChecklist::runToggled, this, &CompareView::setRunVisible);

  gridHost_ = new QWidget;
  grid_ = new QGridLayout(gridHost_);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setWidget(gridHost_);

  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(runList_);
  top->addWidget(scroll);
  top->setStretchFactor(1, 1);
  top->setSizes({180, 900});
  auto* below = new QTabWidget(this);
  below->addTab(diff_, tr("Settings that differ"));
  below->addTab(target_, tr("Time to target"));
  auto* body = new QSplitter(Qt::Vertical, this);
  body->addWidget(top);
  body->addWidget(below);
  body->setStretchFactor(0, 3);
  body->setStretchFactor(1, 1);

  smoothSlider_->setMinimumWidth(80);
  auto* network = new QHBoxLayout;  // a row of its own: the first one is full
  network->addWidget(network_);
  network->addStretch(1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(network);
  layout->addWidget(body, 1);

  const QSignalBlocker block(smoothSlider_);
  smoothSlider_->setValue(int(std::lround(smoothing_ * 100)));
  smoothLabel_->setText(QString::number(smoothing_, 'f', 2));
}

void CompareView::setRuns(std::shared_ptr<ps::RunStore> store, const QList<qint64>& ids,
                          const std::set<qint64>& hidden) {
  store_ = std::move(store);
  ids_ = ids;
  hidden_ = hidden;
  for (PlotWidget* p : plots_) p->setXRange(std::nullopt);  // a new set of runs starts unzoomed
  reload();
}

void CompareView::reload() {
  std::vector<RunSeries> loaded;
  QStringList errors;
  for (qint64 id : ids_) {
    try {
      if (store_) loaded.push_back(RunSeries::load(*store_, id));
    } catch (const std::exception& e) {
      errors << QString::fromStdString(e.what());
    }
  }
  if (!errors.isEmpty())
    Q_EMIT errorOccurred(tr("Some runs could not be compared: %1").arg(errors.join(QStringLiteral("; "))));
  runs_ = std::move(loaded);
  retimeRuns();
  std::vector<SettingsDiffModel::Run> diffRuns;
  for (const auto& r : runs_) diffRuns.push_back({r.info.id, runLabel(r), runColor(r.info.id), r.config});
  diff_->setRuns(diffRuns);
  std::vector<std::pair<qint64, QString>> listed;
  for (const auto& r : runs_) listed.emplace_back(r.info.id, runLabel(r));
  runList_->setRuns(listed, hidden_);
  // Keep the charts (and their zoom) when the chart set is unchanged, as on a live reload.
  std::vector<const RunSeries*> all;
  for (const auto& r : runs_) all.push_back(&r);
  auto charts = compareCharts(all);
  for (const std::string& key : picked_)
    charts.push_back({QString::fromStdString(key), QString(), CompareChart::Kind::Line, {key}, {}});
  fillMetricPicker(all);
  bool same = charts.size() == charts_.size();
  for (size_t i = 0; same && i < charts.size(); ++i) same = charts[i].title == charts_[i].title;
  if (!same) {
    charts_ = charts;
    rebuildCharts();
  }
  redraw();
}

QList<qint64> CompareView::runIds() const {
  QList<qint64> ids;
  for (const auto& r : runs_) ids.push_back(r.info.id);
  return ids;
}

void CompareView::rebuildCharts() {
  for (PlotWidget* p : plots_) delete p;
  plots_.clear();
  for (size_t i = 0; i < charts_.size(); ++i) {
    auto* plot = new PlotWidget(charts_[i].title, gridHost_);
    plot->setMinimumSize(320, 220);
    grid_->addWidget(plot, int(i) / kColumns, int(i) % kColumns);
    plots_.push_back(plot);
    if (charts_[i].kind == CompareChart::Kind::Line)
      connect(plot, &PlotWidget::xRangeChanged, this, [this, plot](double lo, double hi) { linkZoom(plot, lo, hi); });
  }
}

QList<PlotWidget*> CompareView::plots() const {
  return QList<PlotWidget*>(plots_.begin(), plots_.end());
}

PlotWidget* CompareView::plot(const QString& title) const {
  for (size_t i = 0; i < charts_.size(); ++i)
    if (charts_[i].title == title) return plots_[i];
  return nullptr;
}

std::vector<const RunSeries*> CompareView::visibleRuns() const {
  std::vector<const RunSeries*> out;
  for (const auto& r : runs_)
    if (isRunVisible(r.info.id)) out.push_back(&r);
  return out;
}

void CompareView::redraw() {
  for (size_t i = 0; i < charts_.size(); ++i) drawChart(plots_[i], charts_[i]);
  target_->setRuns(visibleRuns());
}

void CompareView::drawChart(PlotWidget* plot, const CompareChart& chart) {
  plot->clear();
  plot->setLogY(logY_);
  const auto runs = visibleRuns();
  if (chart.kind == CompareChart::Kind::Pareto) {
    plot->setAxisLabels(xAxisLabel(XAxis::Bytes), chart.yLabel);
    for (const RunSeries* r : runs) {
      const QColor color = runColor(r->info.id);
      SeriesStyle curve{color, false, true, false, false};  // dashed path, not in the legend
      plot->setSeries(seriesId(r->info.id) + QStringLiteral("/curve"), runLabel(*r), paretoCurve(*r), curve);
      if (auto point = paretoPoint(*r))
        plot->setSeries(seriesId(r->info.id), runLabel(*r), {*point}, SeriesStyle{color, false, false, true, true});
    }
    return;
  }
  plot->setAxisLabels(xAxisLabel(axis_), chart.yLabel);
  std::vector<Marker> markers;
  std::vector<std::vector<const RunSeries*>> groups;
  if (groupSeeds_)
    groups = seedGroups(runs);
  else
    for (const RunSeries* r : runs) groups.push_back({r});
  for (const auto& group : groups) {
    if (group.size() < 2 || !drawGroup(plot, chart, group))
      for (const RunSeries* r : group) drawRun(plot, chart, *r);
    // With several runs a marker says whose change it was.
    for (const RunSeries* r : group)
      for (const auto& [x, label] : r->markers(axis_))
        markers.push_back({x, runs.size() > 1 ? runLabel(*r) + QStringLiteral(": ") + label : label});
  }
  plot->setMarkers(std::move(markers));
}

// One run's line, smoothed with the raw line faint behind where the series is dense.
void CompareView::drawRun(PlotWidget* plot, const CompareChart& chart, const RunSeries& r) {
  auto points = chartLine(chart, r, axis_);
  if (points.empty()) return;
  const QColor color = runColor(r.info.id);
  const QString id = seriesId(r.info.id);
  if (smoothing_ > 0 && dense(points.size(), r)) {
    SeriesStyle raw{color, true};  // faint, and not listed: the smoothed line names the run
    raw.legend = false;
    plot->setSeries(id + QStringLiteral("/raw"), runLabel(r), points, raw);
    plot->setSeries(id, runLabel(r), smoothEma(points, smoothing_), SeriesStyle{color});
  } else {
    plot->setSeries(id, runLabel(r), std::move(points), SeriesStyle{color});
  }
}

// Runs that differ only in seed: their mean line, in the first run's colour, over their min–max band. False when
// fewer than two of them have this chart's metric (they are then drawn one by one).
bool CompareView::drawGroup(PlotWidget* plot, const CompareChart& chart, const std::vector<const RunSeries*>& group) {
  std::vector<std::vector<QPointF>> lines;
  for (const RunSeries* r : group)
    if (auto points = chartLine(chart, *r, axis_); !points.empty()) lines.push_back(std::move(points));
  if (lines.size() < 2) return false;
  SeedBand band = seedBand(lines);
  if (band.mean.empty()) return false;
  const RunSeries& first = *group.front();
  if (smoothing_ > 0 && dense(band.mean.size(), first))
    for (auto* line : {&band.mean, &band.lo, &band.hi}) *line = smoothEma(*line, smoothing_);
  const QColor color = runColor(first.info.id);
  const QString id = groupSeriesId(first.info.id);
  SeriesStyle edge{color, true};
  edge.legend = false;  // the mean line names the group
  plot->setSeries(id + QStringLiteral("/hi"), QString(), std::move(band.hi), edge);
  edge.fillTo = id + QStringLiteral("/hi");
  plot->setSeries(id + QStringLiteral("/lo"), QString(), std::move(band.lo), edge);
  plot->setSeries(id, tr("%1 (mean of %n seeds)", nullptr, int(lines.size())).arg(runLabel(first)),
                  std::move(band.mean), SeriesStyle{color});
  return true;
}

void CompareView::setGroupSeeds(bool on) {
  {
    const QSignalBlocker block(groupCheck_);
    groupCheck_->setChecked(on);
  }
  if (on == groupSeeds_) return;
  groupSeeds_ = on;
  redraw();
}

void CompareView::linkZoom(PlotWidget* source, double lo, double hi) {
  std::optional<std::pair<double, double>> range;
  if (!std::isnan(lo) && !std::isnan(hi)) range = std::make_pair(lo, hi);
  for (size_t i = 0; i < plots_.size(); ++i)
    if (plots_[i] != source && charts_[i].kind == CompareChart::Kind::Line) plots_[i]->setXRange(range);
}

void CompareView::setXAxis(XAxis axis) {
  {
    const QSignalBlocker block(axisCombo_);
    axisCombo_->setCurrentIndex(axisCombo_->findData(int(axis)));
  }
  if (axis == axis_) return;
  axis_ = axis;
  for (PlotWidget* p : plots_) p->setXRange(std::nullopt);
  redraw();
}

void CompareView::setSmoothing(double weight) {
  weight = std::clamp(std::isfinite(weight) ? weight : 0.0, 0.0, 0.99);
  {
    const QSignalBlocker block(smoothSlider_);
    smoothSlider_->setValue(int(std::lround(weight * 100)));
  }
  smoothLabel_->setText(QString::number(weight, 'f', 2));
  if (weight == smoothing_) return;
  smoothing_ = weight;
  redraw();
}

void CompareView::setLogY(bool on) {
  {
    const QSignalBlocker block(logCheck_);
    logCheck_->setChecked(on);
  }
  if (on == logY_) return;
  logY_ = on;
  for (PlotWidget* p : plots_) p->setLogY(on);
}

void CompareView::setRunVisible(qint64 id, bool visible) {
  if (isRunVisible(id) == visible) return;
  if (visible)
    hidden_.erase(id);
  else
    hidden_.insert(id);
  runList_->setChecked(id, visible);
  redraw();
  Q_EMIT runVisibilityChanged(id, visible);
}

SettingsDiffModel* CompareView::diffModel() const {
  return diff_->model();
}

int CompareView::diffRowCount() const {
  return diff_->model()->rowCount();
}

void CompareView::setShowAllSettings(bool all) {
  diff_->setShowAll(all);
}

}  // namespace ps::ui
