#include "app/ui/runs/NetworkControls.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSignalBlocker>

namespace ps::ui {

NetworkControls::NetworkControls(QWidget* parent)
    : QWidget(parent),
      on_(new QCheckBox(tr("Re-time at"), this)),
      bandwidth_(new QDoubleSpinBox(this)),
      latency_(new QDoubleSpinBox(this)) {
  on_->setToolTip(
      tr("Show the emulated time of every run as it would be on this network, replayed from the "
         "traces the runs stored (measured compute and codec times, every message's bytes)"));
  bandwidth_->setRange(0.001, 1e7);
  bandwidth_->setDecimals(3);
  bandwidth_->setValue(100);
  bandwidth_->setSuffix(tr(" Mbit/s"));
  bandwidth_->setToolTip(tr("Link bandwidth"));
  latency_->setRange(0, 60000);
  latency_->setDecimals(3);
  latency_->setValue(1);
  latency_->setSuffix(tr(" ms"));
  latency_->setToolTip(tr("Latency per message"));
  for (QDoubleSpinBox* box : {bandwidth_, latency_}) {
    box->setKeyboardTracking(false);
    box->setEnabled(false);
    connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] {
      if (on_->isChecked()) Q_EMIT networkChanged();
    });
  }
  connect(on_, &QCheckBox::toggled, this, [this](bool on) {
    bandwidth_->setEnabled(on);
    latency_->setEnabled(on);
    Q_EMIT networkChanged();
  });
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(on_);
  layout->addWidget(bandwidth_);
  layout->addWidget(latency_);
}

RetimeNetwork NetworkControls::network() const {
  RetimeNetwork n;
  if (!on_->isChecked()) return n;
  n.bandwidth_mbps = bandwidth_->value();
  n.latency_ms = latency_->value();
  return n;
}

void NetworkControls::setNetwork(const RetimeNetwork& network) {
  const bool on = network.bandwidth_mbps || network.latency_ms;
  {
    const QSignalBlocker a(bandwidth_), b(latency_), c(on_);
    if (network.bandwidth_mbps) bandwidth_->setValue(*network.bandwidth_mbps);
    if (network.latency_ms) latency_->setValue(*network.latency_ms);
    on_->setChecked(on);
    bandwidth_->setEnabled(on);
    latency_->setEnabled(on);
  }
  Q_EMIT networkChanged();
}

QString NetworkControls::describe() const {
  if (!on_->isChecked()) return {};
  return tr("%1 Mbit/s, %2 ms").arg(bandwidth_->value()).arg(latency_->value());
}

}  // namespace ps::ui
