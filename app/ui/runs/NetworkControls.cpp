#include "app/ui/runs/NetworkControls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QStringList>

#include <initializer_list>

namespace ps::ui {

NetworkControls::NetworkControls(QWidget* parent)
    : QWidget(parent),
      on_(new QCheckBox(tr("Re-time at"), this)),
      bandwidth_(new QDoubleSpinBox(this)),
      latency_(new QDoubleSpinBox(this)),
      framing_(new QComboBox(this)),
      egress_(new QComboBox(this)) {
  on_->setToolTip(
      tr("Show the emulated time of every run as it would be on this network, replayed from the "
         "traces the runs stored (measured compute and codec times, every message's bytes)"));
  // Each figure's minimum is "as recorded", below the smallest real value (bandwidth > 0, latency >= 0).
  bandwidth_->setRange(0, 1e7);
  bandwidth_->setDecimals(3);
  bandwidth_->setValue(100);
  bandwidth_->setSuffix(tr(" Mbit/s"));
  bandwidth_->setSpecialValueText(tr("bandwidth as recorded"));
  bandwidth_->setToolTip(tr("Link bandwidth (at its minimum: what each step ran with)"));
  latency_->setRange(-0.001, 60000);
  latency_->setDecimals(3);
  latency_->setValue(1);
  latency_->setSuffix(tr(" ms"));
  latency_->setSpecialValueText(tr("latency as recorded"));
  latency_->setToolTip(tr("Latency per message (below 0: what each step ran with)"));
  framing_->addItem(tr("framing as recorded"), -1);
  framing_->addItem(tr("TCP/IPv4 framing"), 1);
  framing_->addItem(tr("ideal link"), 0);
  framing_->setToolTip(tr("What a payload costs on the wire: TCP/IPv4 headers on every Ethernet segment, or the "
                          "payload alone"));
  egress_->addItem(tr("egress as recorded"), -1);
  egress_->addItem(tr("a wire per link direction"), 0);
  egress_->addItem(tr("one interface per stage"), 1);
  egress_->setToolTip(tr("Where a stage's messages leave: a wire of their own for each link direction (as between "
                         "GPUs), or one network interface that a stage's activations and gradients queue for (as a "
                         "host with one network card)"));
  for (QComboBox* box : {framing_, egress_}) {
    connect(box, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
      if (on_->isChecked()) Q_EMIT networkChanged();
    });
  }
  for (QDoubleSpinBox* box : {bandwidth_, latency_}) {
    box->setKeyboardTracking(false);
    connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] {
      if (on_->isChecked()) Q_EMIT networkChanged();
    });
  }
  setFiguresEnabled(false);
  connect(on_, &QCheckBox::toggled, this, [this](bool on) {
    setFiguresEnabled(on);
    Q_EMIT networkChanged();
  });
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(on_);
  layout->addWidget(bandwidth_);
  layout->addWidget(latency_);
  layout->addWidget(framing_);
  layout->addWidget(egress_);
}

RetimeNetwork NetworkControls::network() const {
  RetimeNetwork n;
  if (!on_->isChecked()) return n;
  if (bandwidth_->value() > bandwidth_->minimum()) n.bandwidth_mbps = bandwidth_->value();
  if (latency_->value() > latency_->minimum()) n.latency_ms = latency_->value();
  if (const int f = framing_->currentData().toInt(); f >= 0) n.tcp = f == 1;
  if (const int e = egress_->currentData().toInt(); e >= 0) n.shared_egress = e == 1;
  return n;
}

void NetworkControls::setNetwork(const RetimeNetwork& network) {
  const bool on = !network.empty();
  {
    const QSignalBlocker a(bandwidth_), b(latency_), c(on_), d(framing_), e(egress_);
    if (on) {  // unticking keeps the figures, for the next tick
      bandwidth_->setValue(network.bandwidth_mbps.value_or(bandwidth_->minimum()));
      latency_->setValue(network.latency_ms.value_or(latency_->minimum()));
      framing_->setCurrentIndex(framing_->findData(network.tcp ? int(*network.tcp) : -1));
      egress_->setCurrentIndex(egress_->findData(network.shared_egress ? int(*network.shared_egress) : -1));
    }
    on_->setChecked(on);
    setFiguresEnabled(on);
  }
  Q_EMIT networkChanged();
}

void NetworkControls::setFiguresEnabled(bool on) {
  for (QWidget* w : std::initializer_list<QWidget*>{bandwidth_, latency_, framing_, egress_}) w->setEnabled(on);
}

QString NetworkControls::describe() const { return describe(network()); }

QString NetworkControls::describe(const RetimeNetwork& n) {
  QStringList parts;
  if (n.bandwidth_mbps) parts << tr("%1 Mbit/s").arg(*n.bandwidth_mbps);
  if (n.latency_ms) parts << tr("%1 ms").arg(*n.latency_ms);
  if (n.tcp) parts << (*n.tcp ? tr("TCP/IPv4 framing") : tr("ideal link"));
  if (n.shared_egress) parts << (*n.shared_egress ? tr("one interface per stage") : tr("a wire per link direction"));
  return parts.join(QStringLiteral(", "));
}

}  // namespace ps::ui
