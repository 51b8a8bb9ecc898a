#include "app/ui/runs/CompareGrid.h"

#include "app/ui/charts/ChartLegend.h"

#include <QDir>
#include <QFontMetrics>
#include <QGridLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace ps::ui {

namespace {
constexpr int kColumns = 2;  // charts per grid row
}  // namespace

CompareGrid::CompareGrid(QWidget* parent)
    : QWidget(parent),
      legend_(new ChartLegend),
      legendScroll_(new QScrollArea(this)),
      host_(new QWidget),
      grid_(new QGridLayout(host_)) {
  legendScroll_->setWidget(legend_);
  legendScroll_->setWidgetResizable(true);
  legendScroll_->setFrameShape(QFrame::NoFrame);
  legendScroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* charts = new QScrollArea(this);
  charts->setWidgetResizable(true);
  charts->setWidget(host_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(legendScroll_);
  layout->addWidget(charts, 1);
}

void CompareGrid::setCharts(const std::vector<CompareChart>& charts) {
  bool same = charts.size() == charts_.size();
  for (size_t i = 0; same && i < charts.size(); ++i) same = charts[i].title == charts_[i].title;
  if (same) return;
  charts_ = charts;
  for (PlotWidget* p : plots_) delete p;
  plots_.clear();
  for (size_t i = 0; i < charts_.size(); ++i) {
    auto* plot = new PlotWidget(charts_[i].title, host_);
    plot->setMinimumSize(320, 220);
    plot->setLegendVisible(false);  // the grid's one legend names the runs
    grid_->addWidget(plot, int(i) / kColumns, int(i) % kColumns);
    plots_.push_back(plot);
    if (charts_[i].kind == CompareChart::Kind::Line)
      connect(plot, &PlotWidget::xRangeChanged, this, [this, plot](double lo, double hi) { linkZoom(plot, lo, hi); });
  }
}

PlotWidget* CompareGrid::plot(const QString& title) const {
  for (size_t i = 0; i < charts_.size(); ++i)
    if (charts_[i].title == title) return plots_[i];
  return nullptr;
}

void CompareGrid::draw(const std::vector<const RunSeries*>& runs, const CompareOptions& options,
                       const RunNames& names) {
  std::vector<PlotWidget*> lines;
  for (size_t i = 0; i < charts_.size(); ++i) {
    drawCompareChart(*plots_[i], charts_[i], runs, options, names);
    if (charts_[i].kind == CompareChart::Kind::Line)
      lines.push_back(plots_[i]);
    else  // the Pareto chart keeps every run, so with seeds grouped it names them itself, below its plot
      plots_[i]->setLegendVisible(options.groupSeeds);
  }
  legend_->setItems(lines);
  fitLegend();
}

void CompareGrid::fitLegend() {
  const int row = QFontMetrics(legend_->font()).height() + 4;  // at most four rows in view; the rest scrolls
  legendScroll_->setFixedHeight(std::min(legend_->heightForWidth(legendScroll_->viewport()->width()), 4 * row + 8));
}

void CompareGrid::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitLegend();
}

void CompareGrid::setLogY(bool on) {
  for (PlotWidget* p : plots_) p->setLogY(on);
}

void CompareGrid::resetZoom() {
  for (PlotWidget* p : plots_) p->setXRange(std::nullopt);
}

void CompareGrid::linkZoom(PlotWidget* source, double lo, double hi) {
  std::optional<std::pair<double, double>> range;
  if (!std::isnan(lo) && !std::isnan(hi)) range = std::make_pair(lo, hi);
  for (size_t i = 0; i < plots_.size(); ++i)
    if (plots_[i] != source && charts_[i].kind == CompareChart::Kind::Line) plots_[i]->setXRange(range);
}

int CompareGrid::exportAll(const QString& dir, ChartFormat format) const {
  if (!QDir().mkpath(dir)) return 0;
  int written = 0;
  for (size_t i = 0; i < plots_.size(); ++i) {
    const QString name = chartFileStem(charts_[i].title) + QLatin1Char('.') + chartSuffix(format);
    if (plots_[i]->exportChart(QDir(dir).filePath(name), format)) ++written;
  }
  return written;
}

std::vector<CsvChart> CompareGrid::visibleRanges() const {
  std::vector<CsvChart> out;
  for (size_t i = 0; i < charts_.size(); ++i) out.push_back({&charts_[i], plots_[i]->xRange()});
  return out;
}

}  // namespace ps::ui
