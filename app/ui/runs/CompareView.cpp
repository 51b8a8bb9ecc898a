#include "app/ui/runs/CompareView.h"

#include "app/ui/charts/ExportSettings.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/runs/BreakevenChart.h"
#include "app/ui/runs/CompareControls.h"
#include "app/ui/runs/CompareGrid.h"
#include "app/ui/runs/NetworkControls.h"
#include "app/ui/runs/RunChecklist.h"
#include "app/ui/runs/SettingsDiffView.h"
#include "app/ui/runs/TargetTable.h"
#include "engine/telemetry/MetricTitles.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ps::ui {

namespace {
constexpr int kDetailsHeight = 640;  // a view at least this tall shows the details pane from the start
}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      controls_(new CompareControls(this)),
      network_(new NetworkControls(this)),
      runList_(new RunChecklist(this)),
      grid_(new CompareGrid(this)),
      diff_(new SettingsDiffView(this)),
      target_(new TargetTable(this)),
      breakeven_(new BreakevenChart(this)) {
  layOut();
  connectControls();
}

CompareView::~CompareView() = default;

void CompareView::layOut() {
  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(runList_);
  top->addWidget(grid_);
  top->setStretchFactor(1, 1);
  top->setSizes({180, 900});
  details_ = new QTabWidget(this);
  details_->addTab(diff_, tr("Settings that differ"));
  details_->addTab(target_, tr("Time to target"));
  details_->addTab(breakeven_, tr("Break-even"));
  detailsToggle_ = new QToolButton(details_);
  detailsToggle_->setAutoRaise(true);
  detailsToggle_->setObjectName(QStringLiteral("detailsToggle"));
  details_->setCornerWidget(detailsToggle_, Qt::TopRightCorner);
  connect(detailsToggle_, &QToolButton::clicked, this, [this] {
    detailsChosen_ = true;
    setDetailsShown(!detailsShown_);
  });
  connect(details_->tabBar(), &QTabBar::tabBarClicked, this, [this] {
    detailsChosen_ = true;
    setDetailsShown(true);
  });
  body_ = new QSplitter(Qt::Vertical, this);
  body_->addWidget(top);
  body_->addWidget(details_);
  body_->setStretchFactor(0, 3);
  body_->setStretchFactor(1, 1);
  body_->setCollapsible(0, false);

  auto* network = new QHBoxLayout;  // a row of its own: the controls' row is full
  network->addWidget(network_);
  network->addStretch(1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(controls_);
  layout->addLayout(network);
  layout->addWidget(body_, 1);
  setDetailsShown(true);
}

void CompareView::setDetailsShown(bool shown) {
  detailsShown_ = shown;
  const int folded = details_->tabBar()->sizeHint().height() + 2;
  details_->setMinimumHeight(shown ? 0 : folded);
  details_->setMaximumHeight(shown ? QWIDGETSIZE_MAX : folded);
  detailsToggle_->setText(shown ? tr("Hide ▾") : tr("Show ▴"));
  detailsToggle_->setToolTip(shown ? tr("Fold the settings diff and the time-to-target table to their tabs")
                                   : tr("Show the settings diff and the time-to-target table"));
}

void CompareView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Until the user folds or unfolds it, the height decides: a short view (a laptop's screen under a runs table)
  // keeps its height for the charts.
  if (!detailsChosen_ && height() > 100) setDetailsShown(height() >= kDetailsHeight);
}

void CompareView::connectControls() {
  connect(controls_, &CompareControls::axisChosen, this, &CompareView::setXAxis);
  connect(controls_, &CompareControls::smoothingChosen, this, &CompareView::setSmoothing);
  connect(controls_, &CompareControls::logYChosen, this, &CompareView::setLogY);
  connect(controls_, &CompareControls::ignoreOutliersChosen, this, &CompareView::setIgnoreOutliers);
  connect(controls_, &CompareControls::groupSeedsChosen, this, &CompareView::setGroupSeeds);
  connect(controls_, &CompareControls::metricChartRequested, this,
          [this](const QString& key) { addMetricChart(key.toStdString()); });
  connect(controls_, &CompareControls::removeMetricChartsRequested, this, &CompareView::removeMetricCharts);
  connect(controls_, &CompareControls::exportChartsRequested, this, &CompareView::exportAllDialog);
  connect(controls_, &CompareControls::exportVisibleCsvRequested, this, &CompareView::exportVisibleCsvDialog);
  connect(network_, &NetworkControls::networkChanged, this, [this] {
    retimeRuns();
    redraw();
    Q_EMIT timeTargetChanged();
  });
  connect(target_, &TargetTable::targetChanged, this, [this] {
    mapBreakeven();
    Q_EMIT timeTargetChanged();
  });
  connect(runList_, &RunChecklist::runToggled, this, &CompareView::setRunVisible);
}

// ---- the runs

void CompareView::setRuns(std::shared_ptr<ps::RunStore> store, const QList<qint64>& ids,
                          const std::set<qint64>& hidden) {
  store_ = std::move(store);
  ids_ = ids;
  hidden_ = hidden;
  grid_->resetZoom();  // a new set of runs starts unzoomed
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
  std::vector<const RunSeries*> all;
  for (const auto& r : runs_) all.push_back(&r);
  names_ = displayNames(all);
  std::vector<SettingsDiffModel::Run> diffRuns;
  for (const auto& r : runs_)
    diffRuns.push_back({r.info.id, names_.of(r), runColor(r.info.id), r.config, r.settingChanges()});
  diff_->setRuns(diffRuns);
  std::vector<std::pair<qint64, QString>> listed;
  for (const auto& r : runs_) listed.emplace_back(r.info.id, names_.of(r));
  runList_->setRuns(listed, hidden_);
  // The chart set depends on the runs (accuracy or perplexity); the grid keeps its plots when it is unchanged.
  auto charts = compareCharts(all);
  for (const std::string& key : picked_)
    charts.push_back({QString::fromStdString(metricTitle(key)), QString(), CompareChart::Kind::Line, {key}, {}});
  offerMetricCharts();
  grid_->setCharts(charts);
  redraw();
}

QList<qint64> CompareView::runIds() const {
  QList<qint64> ids;
  for (const auto& r : runs_) ids.push_back(r.info.id);
  return ids;
}

std::vector<const RunSeries*> CompareView::visibleRuns() const {
  std::vector<const RunSeries*> out;
  for (const auto& r : runs_)
    if (isRunVisible(r.info.id)) out.push_back(&r);
  return out;
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

void CompareView::redraw() {
  const auto runs = visibleRuns();
  grid_->draw(runs, options_, names_);
  target_->setRuns(runs, names_);
  mapBreakeven();
}

void CompareView::mapBreakeven() {
  breakeven_->setRuns(store_, visibleRuns(), names_, target_->target(), target_->languageModels(), network(),
                      options_.groupSeeds);
}

// ---- the charts

QList<PlotWidget*> CompareView::plots() const {
  const auto& plots = grid_->plots();
  return QList<PlotWidget*>(plots.begin(), plots.end());
}

PlotWidget* CompareView::plot(const QString& title) const {
  return grid_->plot(title);
}

void CompareView::offerMetricCharts() {
  std::set<std::string> keys;
  for (const RunSeries& r : runs_)
    for (const auto& entry : r.metrics) keys.insert(entry.first);
  controls_->setMetricKeys(keys, !picked_.empty());
}

bool CompareView::addMetricChart(const std::string& key) {
  const bool recorded = std::any_of(runs_.begin(), runs_.end(), [&](const RunSeries& r) { return r.has(key); });
  if (!recorded || std::find(picked_.begin(), picked_.end(), key) != picked_.end()) return false;
  picked_.push_back(key);
  reload();
  return true;
}

void CompareView::removeMetricCharts() {
  if (picked_.empty()) return;
  picked_.clear();
  reload();
}

// ---- what the user chose

template <typename T>
bool CompareView::choose(T CompareOptions::*option, T value) {
  const bool changed = options_.*option != value;
  options_.*option = value;
  controls_->setOptions(options_);
  return changed;
}

void CompareView::setXAxis(XAxis axis) {
  if (!choose(&CompareOptions::axis, axis)) return;
  grid_->resetZoom();  // the old range means nothing on the new axis
  redraw();
}

void CompareView::setSmoothing(double weight) {
  if (choose(&CompareOptions::smoothing, std::clamp(std::isfinite(weight) ? weight : 0.0, 0.0, 0.99))) redraw();
}

void CompareView::setLogY(bool on) {
  if (choose(&CompareOptions::logY, on)) grid_->setLogY(on);
}

void CompareView::setIgnoreOutliers(bool on) {
  if (choose(&CompareOptions::ignoreOutliers, on)) redraw();
}

void CompareView::setGroupSeeds(bool on) {
  if (choose(&CompareOptions::groupSeeds, on)) redraw();
}

// ---- the network runs are re-timed for

RetimeNetwork CompareView::network() const {
  return network_->network();
}

void CompareView::setNetwork(const RetimeNetwork& network) {
  network_->setNetwork(network);
}

void CompareView::retimeRuns() {
  const RetimeNetwork n = network_->network();
  QStringList kept, damaged;
  for (auto& r : runs_) {
    try {
      if (!r.retime(n)) kept << QString::number(r.info.id);
    } catch (const std::exception& e) {
      damaged << QStringLiteral("%1 (%2)").arg(r.info.id).arg(QString::fromStdString(e.what()));
    }
  }
  if (!damaged.isEmpty())
    Q_EMIT statusMessage(tr("Runs %1 keep their recorded emulated time: a step trace is damaged")
                             .arg(damaged.join(QStringLiteral(", "))));
  else if (!kept.isEmpty())
    Q_EMIT statusMessage(tr("Runs %1 keep their recorded emulated time: they were saved without step traces")
                             .arg(kept.join(QStringLiteral(", "))));
  else if (!n.empty())
    Q_EMIT statusMessage(tr("Emulated time re-timed for %1").arg(NetworkControls::describe(n)));
}

// ---- the settings diff

SettingsDiffModel* CompareView::diffModel() const {
  return diff_->model();
}

int CompareView::diffRowCount() const {
  return diff_->model()->rowCount();
}

void CompareView::setShowAllSettings(bool all) {
  diff_->setShowAll(all);
}

// ---- exports

int CompareView::exportAll(const QString& dir, ChartFormat format) {
  return grid_->exportAll(dir, format);
}

QString CompareView::exportVisibleCsv(const QString& path) const {
  return writeVisibleCsv(path, grid_->visibleRanges(), visibleRuns(), options_.axis);
}

void CompareView::exportAllDialog(ChartFormat format) {
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Export every chart as %1").arg(chartSuffix(format).toUpper()),
                                        exports::folder(QStringLiteral("charts")));
  if (dir.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("charts"), dir);
  const int n = exportAll(dir, format);
  const int charts = int(grid_->plots().size());
  if (n < charts)
    Q_EMIT errorOccurred(tr("Only %1 of %2 charts could be written to %3; choose a folder you can write to.")
                             .arg(n)
                             .arg(charts)
                             .arg(dir));
  else
    Q_EMIT statusMessage(tr("%1 charts exported to %2").arg(n).arg(dir));
}

void CompareView::exportVisibleCsvDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the visible range as CSV"),
                                                    exports::suggestedPath(QStringLiteral("csv"), "compare.csv"),
                                                    tr("CSV files (*.csv)"));
  const QString error = path.isEmpty() ? QString() : exportVisibleCsv(path);
  if (!path.isEmpty()) exports::rememberFolder(QStringLiteral("csv"), path);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else if (!path.isEmpty())
    Q_EMIT statusMessage(tr("Visible range exported to %1").arg(path));
}

}  // namespace ps::ui
