// The compare view's charts of any metric and its network for re-timing (CompareView.h).
#include "app/ui/runs/CompareView.h"
#include "app/ui/runs/NetworkControls.h"

#include <QComboBox>

#include <algorithm>
#include <set>

namespace ps::ui {

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

// Every metric key the runs recorded, for a chart of its own.
void CompareView::fillMetricPicker(const std::vector<const RunSeries*>& runs) {
  std::set<std::string> keys;
  for (const RunSeries* r : runs)
    for (const auto& entry : r->metrics) keys.insert(entry.first);
  const QSignalBlocker block(metricCombo_);
  metricCombo_->clear();
  metricCombo_->addItem(tr("Add a chart of…"));
  for (const std::string& key : keys) metricCombo_->addItem(QString::fromStdString(key));
  if (!picked_.empty()) metricCombo_->addItem(tr("Remove the added charts"));
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

}  // namespace ps::ui
