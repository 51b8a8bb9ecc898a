#pragma once
// ps::ui::NetworkControls: the network the compare view re-times its runs for (engine/runs/trace/Retime.h): a tick
// to re-time at all, the link bandwidth in Mbit/s, the latency in ms, the framing (TCP/IPv4 or an ideal link) and
// where a stage's messages leave (a wire per link direction, or one interface per stage). Each of the four can be
// "as recorded" (the spin boxes at their minimum), keeping what every step ran with. Unticked, runs show their
// recorded emulated time. Spin boxes report when a value is entered or stepped, not at every keystroke.
#include "engine/runs/trace/Retime.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;

namespace ps::ui {

class NetworkControls : public QWidget {
  Q_OBJECT
 public:
  explicit NetworkControls(QWidget* parent = nullptr);

  RetimeNetwork network() const;  // empty while unticked; a figure "as recorded" is left unset
  // Ticks the box and shows the network, "as recorded" for what it leaves unset; an empty network unticks it and
  // keeps the figures shown for the next tick.
  void setNetwork(const RetimeNetwork& network);
  QString describe() const;  // "100 Mbit/s, 1 ms", or "" while unticked
  // "100 Mbit/s, 1 ms, one interface per stage": the figures a network sets, or "" for none.
  static QString describe(const RetimeNetwork& network);

 Q_SIGNALS:
  void networkChanged();

 private:
  void setFiguresEnabled(bool on);

  QCheckBox* on_;
  QDoubleSpinBox* bandwidth_;
  QDoubleSpinBox* latency_;
  QComboBox* framing_;  // data: -1 as recorded, 1 TCP/IPv4, 0 ideal
  QComboBox* egress_;   // data: -1 as recorded, 0 a wire per link direction, 1 one interface per stage
};

}  // namespace ps::ui
