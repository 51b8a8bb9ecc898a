#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/TargetTable.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
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
  smoothSlider_->setValue(int(std::lround(options_.smoothing * 100)));
  smoothLabel_->setText(QString::number(options_.smoothing, 'f', 2));
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
  const auto runs = visibleRuns();
  for (size_t i = 0; i < charts_.size(); ++i) drawCompareChart(*plots_[i], charts_[i], runs, options_);
  target_->setRuns(visibleRuns());
}

void CompareView::setGroupSeeds(bool on) {
  {
    const QSignalBlocker block(groupCheck_);
    groupCheck_->setChecked(on);
  }
  if (on == options_.groupSeeds) return;
  options_.groupSeeds = on;
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
  if (axis == options_.axis) return;
  options_.axis = axis;
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
  if (weight == options_.smoothing) return;
  options_.smoothing = weight;
  redraw();
}

void CompareView::setLogY(bool on) {
  {
    const QSignalBlocker block(logCheck_);
    logCheck_->setChecked(on);
  }
  if (on == options_.logY) return;
  options_.logY = on;
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
