#include "app/ui/runs/CompareGrid.h"

#include <QDir>
#include <QGridLayout>

#include <cmath>
#include <optional>
#include <utility>

namespace ps::ui {

namespace {
constexpr int kColumns = 2;  // charts per grid row
}  // namespace

CompareGrid::CompareGrid(QWidget* parent) : QScrollArea(parent), host_(new QWidget), grid_(new QGridLayout(host_)) {
  setWidgetResizable(true);
  setWidget(host_);
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
  for (size_t i = 0; i < charts_.size(); ++i) drawCompareChart(*plots_[i], charts_[i], runs, options, names);
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
