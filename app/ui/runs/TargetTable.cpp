#include "app/ui/runs/TargetTable.h"

#include "app/ui/charts/Palette.h"
#include "app/ui/runs/Units.h"
#include "engine/core/Metrics.h"
#include "engine/runs/store/Reach.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ps::ui {

std::optional<TargetReach> reachTarget(const RunSeries& run, double target) {
  const bool lm = run.isLanguageModel();
  const auto curve = run.metrics.find(lm ? metric::kEvalPerplexity : metric::kEvalAccuracy);
  if (curve == run.metrics.end()) return std::nullopt;
  const auto r = reach(curve->second, target, !lm, [](const SeriesPoint& p) { return p.value; });
  if (!r) return std::nullopt;
  TargetReach t;
  t.step = r->read([](const SeriesPoint& p) { return double(p.step); });
  t.wall_s = r->read([](const SeriesPoint& p) { return p.wall_s; });
  t.emulated_s = r->read([&](const SeriesPoint& p) { return run.emulatedOf(p); });  // at the chosen network
  t.wire_bytes = r->read([&](const SeriesPoint& p) { return run.bytesAt(p.step); });
  return t;
}

TargetTable::TargetTable(QWidget* parent)
    : QWidget(parent), target_(new QDoubleSpinBox(this)), what_(new QLabel(this)), table_(new QTableWidget(this)) {
  target_->setDecimals(1);
  target_->setToolTip(tr("Read between the evaluations around the target, as the claim suites measure it"));
  connect(target_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] {
    refill();
    Q_EMIT targetChanged();
  });
  table_->setColumnCount(5);
  table_->setHorizontalHeaderLabels({tr("Run"), tr("Step"), tr("Wall time"), tr("Emulated time"), tr("Wire bytes")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  auto* top = new QHBoxLayout;
  top->addWidget(what_);
  top->addWidget(target_);
  top->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
  setRuns({}, {});
}

double TargetTable::target() const {
  return target_->value();
}

void TargetTable::setTarget(double target) {
  target_->setValue(target);
}

void TargetTable::setRuns(std::vector<const RunSeries*> runs, RunNames names) {
  runs_ = std::move(runs);
  names_ = std::move(names);
  bool lm = !runs_.empty();
  for (const RunSeries* r : runs_) lm = lm && r->isLanguageModel();
  if (lm != languageModels_ || what_->text().isEmpty()) {
    languageModels_ = lm;
    const QSignalBlocker block(target_);
    what_->setText(lm ? tr("Time and bytes to perplexity at or below") : tr("Time and bytes to accuracy at least"));
    target_->setRange(lm ? 1.0 : 0.0, lm ? 1e6 : 100.0);
    target_->setSuffix(lm ? QString() : QStringLiteral(" %"));
    target_->setValue(lm ? 20.0 : 80.0);
    refill();
    Q_EMIT targetChanged();  // what the target means changed: the runs table's time to target follows
    return;
  }
  refill();
}

void TargetTable::refill() {
  table_->setRowCount(int(runs_.size()));
  const double target = languageModels_ ? target_->value() : target_->value() / 100.0;
  for (int row = 0; row < int(runs_.size()); ++row) {
    const RunSeries& r = *runs_[size_t(row)];
    const QString name = names_.of(r);
    QPixmap swatch(10, 10);
    swatch.fill(runColor(r.info.id));
    table_->setItem(row, 0, new QTableWidgetItem(QIcon(swatch), name));
    // A mix of tasks: each run is read against its own metric only when the table's target means that metric.
    const auto reached = r.isLanguageModel() == languageModels_ ? reachTarget(r, target) : std::nullopt;
    const QStringList cells =
        reached ? QStringList{QString::number(qint64(std::llround(reached->step))), humanDuration(reached->wall_s),
                              humanDuration(reached->emulated_s), humanBytes(reached->wire_bytes)}
                : QStringList{tr("not reached"), QString(), QString(), QString()};
    for (int c = 0; c < 4; ++c) table_->setItem(row, c + 1, new QTableWidgetItem(cells[c]));
  }
}

}  // namespace ps::ui
