#include "app/ui/runs/CompareControls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSlider>

#include <cmath>

namespace ps::ui {

CompareControls::CompareControls(QWidget* parent) : QWidget(parent) {
  axis_ = new QComboBox(this);
  for (XAxis a : {XAxis::Step, XAxis::WallTime, XAxis::EmulatedTime, XAxis::Bytes})
    axis_->addItem(xAxisLabel(a), int(a));
  connect(axis_, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { Q_EMIT axisChosen(XAxis(axis_->itemData(i).toInt())); });

  smoothing_ = new QSlider(Qt::Horizontal, this);
  smoothing_->setRange(0, 99);
  smoothing_->setMinimumWidth(80);
  smoothing_->setToolTip(tr("Debiased exponential moving average; the raw line stays faint behind"));
  smoothingValue_ = new QLabel(this);
  smoothingValue_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.00")) + 4);
  connect(smoothing_, &QSlider::valueChanged, this, [this](int v) { Q_EMIT smoothingChosen(v / 100.0); });

  logY_ = new QCheckBox(tr("Log y"), this);
  connect(logY_, &QCheckBox::toggled, this, &CompareControls::logYChosen);
  ignoreOutliers_ = new QCheckBox(tr("Ignore outliers"), this);
  ignoreOutliers_->setToolTip(
      tr("Scale y to the bulk of each dense series (a loss spike does not flatten the rest); points left out are "
         "marked at the edge. Sparse series such as evaluations are always shown whole."));
  connect(ignoreOutliers_, &QCheckBox::toggled, this, &CompareControls::ignoreOutliersChosen);
  groupSeeds_ = new QCheckBox(tr("Group seeds"), this);
  groupSeeds_->setToolTip(tr("Runs that differ only in their seed as one mean line with a min–max band"));
  connect(groupSeeds_, &QCheckBox::toggled, this, &CompareControls::groupSeedsChosen);

  metrics_ = new QComboBox(this);
  metrics_->setToolTip(
      tr("Any metric the runs recorded (per-link codec time, K, error, uncompressed "
         "evaluation, ...) as a chart of its own"));
  connect(metrics_, qOverload<int>(&QComboBox::activated), this, [this](int i) {
    if (i <= 0) return;
    if (canRemove_ && i == metrics_->count() - 1)
      Q_EMIT removeMetricChartsRequested();
    else
      Q_EMIT metricChartRequested(metrics_->itemText(i));
  });
  setMetricKeys({}, false);

  auto* charts = new QPushButton(tr("Export Charts"), this);
  charts->setToolTip(tr("Every chart as it is shown, one file each: PNG, or SVG and PDF as vectors for papers"));
  auto* formats = new QMenu(charts);
  for (const auto& [label, format] :
       {std::pair{tr("As PNG Images…"), ChartFormat::Png}, std::pair{tr("As SVG Vectors…"), ChartFormat::Svg},
        std::pair{tr("As PDF Documents…"), ChartFormat::Pdf}}) {
    const ChartFormat f = format;
    connect(formats->addAction(label), &QAction::triggered, this, [this, f] { Q_EMIT exportChartsRequested(f); });
  }
  charts->setMenu(formats);
  auto* csv = new QPushButton(tr("Export visible CSV…"), this);
  connect(csv, &QPushButton::clicked, this, &CompareControls::exportVisibleCsvRequested);

  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  for (QWidget* w : QList<QWidget*>{new QLabel(tr("X axis:"), this), axis_, new QLabel(tr("Smoothing:"), this),
                                    smoothing_, smoothingValue_, logY_, ignoreOutliers_, groupSeeds_})
    row->addWidget(w);
  row->setStretchFactor(smoothing_, 1);
  row->addStretch(1);
  row->addWidget(metrics_);
  row->addWidget(charts);
  row->addWidget(csv);
  setOptions(CompareOptions{});
}

void CompareControls::setOptions(const CompareOptions& options) {
  const QSignalBlocker a(axis_), s(smoothing_), l(logY_), o(ignoreOutliers_), g(groupSeeds_);
  axis_->setCurrentIndex(axis_->findData(int(options.axis)));
  smoothing_->setValue(int(std::lround(options.smoothing * 100)));
  smoothingValue_->setText(QString::number(options.smoothing, 'f', 2));
  logY_->setChecked(options.logY);
  ignoreOutliers_->setChecked(options.ignoreOutliers);
  groupSeeds_->setChecked(options.groupSeeds);
}

void CompareControls::setMetricKeys(const std::set<std::string>& keys, bool canRemove) {
  const QSignalBlocker block(metrics_);
  canRemove_ = canRemove;
  metrics_->clear();
  metrics_->addItem(tr("Add a chart of…"));
  for (const std::string& key : keys) metrics_->addItem(QString::fromStdString(key));
  if (canRemove) metrics_->addItem(tr("Remove the added charts"));
}

}  // namespace ps::ui
