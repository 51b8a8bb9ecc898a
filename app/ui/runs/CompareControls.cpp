#include "app/ui/runs/CompareControls.h"

#include "app/ui/runs/FlowLayout.h"
#include "engine/telemetry/MetricTitles.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSlider>

#include <algorithm>
#include <cmath>
#include <vector>

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

  // Any recorded metric as a chart of its own: listed by title, found by typing any part of it.
  metrics_ = new QComboBox(this);
  metrics_->setEditable(true);
  metrics_->setInsertPolicy(QComboBox::NoInsert);
  metrics_->lineEdit()->setPlaceholderText(tr("Add a chart of… (type to search)"));
  metrics_->setMinimumContentsLength(28);
  metrics_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  metrics_->completer()->setFilterMode(Qt::MatchContains);
  metrics_->completer()->setCaseSensitivity(Qt::CaseInsensitive);
  metrics_->completer()->setCompletionMode(QCompleter::PopupCompletion);
  metrics_->setToolTip(
      tr("Any metric the runs recorded (per-link codec time, K, error, uncompressed evaluation, ...) as a chart of its "
         "own: type any part of its name, or open the list"));
  const auto request = [this](int i) {
    const QString key = i >= 0 ? metrics_->itemData(i).toString() : QString();
    if (!key.isEmpty()) Q_EMIT metricChartRequested(key);
    metrics_->setCurrentIndex(-1);
    metrics_->clearEditText();
  };
  connect(metrics_, qOverload<int>(&QComboBox::activated), this, request);
  connect(metrics_->completer(), qOverload<const QModelIndex&>(&QCompleter::activated), this,
          [this, request](const QModelIndex& chosen) {
            request(metrics_->findText(chosen.data().toString(), Qt::MatchFixedString));
          });
  removeMetrics_ = new QPushButton(tr("Remove Added Charts"), this);
  connect(removeMetrics_, &QPushButton::clicked, this, &CompareControls::removeMetricChartsRequested);
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

  // One row on a wide window; on a narrow one the controls wrap onto more rows instead of widening the window.
  auto* flow = new FlowLayout(this);
  for (QWidget* w : QList<QWidget*>{new QLabel(tr("X axis:"), this), axis_, smoothingGroup(), logY_, ignoreOutliers_,
                                    groupSeeds_, metrics_, removeMetrics_, charts, csv})
    flow->addWidget(w);
  QSizePolicy policy = sizePolicy();
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
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

// The smoothing slider and its value, kept together when the bar wraps.
QWidget* CompareControls::smoothingGroup() {
  auto* group = new QWidget(this);
  auto* row = new QHBoxLayout(group);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Smoothing:"), group));
  smoothing_->setParent(group);
  smoothing_->setFixedWidth(120);
  row->addWidget(smoothing_);
  smoothingValue_->setParent(group);
  row->addWidget(smoothingValue_);
  return group;
}

void CompareControls::setMetricKeys(const std::set<std::string>& keys, bool canRemove) {
  const QSignalBlocker block(metrics_);
  metrics_->clear();
  std::vector<std::pair<QString, QString>> entries;  // title, key: listed by title
  for (const std::string& key : keys)
    entries.emplace_back(QString::fromStdString(metricTitle(key)), QString::fromStdString(key));
  std::sort(entries.begin(), entries.end());
  for (const auto& [title, key] : entries) {
    metrics_->addItem(title, key);
    metrics_->setItemData(metrics_->count() - 1, key, Qt::ToolTipRole);  // the recorded name, for the CLI and CSV
  }
  metrics_->setCurrentIndex(-1);
  metrics_->clearEditText();
  metrics_->setEnabled(!entries.empty());
  removeMetrics_->setVisible(canRemove);
}

}  // namespace ps::ui
