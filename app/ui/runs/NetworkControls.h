#pragma once
// ps::ui::NetworkControls: the network the compare view re-times its runs for (engine/runs/trace/Retime.h): a tick
// to re-time at all, the link bandwidth in Mbit/s, the latency in ms, the framing (as recorded, TCP/IPv4 or an ideal
// link) and where a stage's messages leave (as recorded, a wire per link direction, or one interface per stage).
// Unticked, runs show their recorded emulated time. Spin boxes report when a value is entered or stepped, not at
// every keystroke.
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

  RetimeNetwork network() const;  // empty (both figures unset) while unticked
  // Ticks the box and sets both figures; an empty network unticks it.
  void setNetwork(const RetimeNetwork& network);
  QString describe() const;  // "100 Mbit/s, 1 ms", or "" while unticked
  // "100 Mbit/s, 1 ms, one interface per stage": the figures a network sets, or "" for none.
  static QString describe(const RetimeNetwork& network);

 Q_SIGNALS:
  void networkChanged();

 private:
  QCheckBox* on_;
  QDoubleSpinBox* bandwidth_;
  QDoubleSpinBox* latency_;
  QComboBox* framing_;  // data: -1 as recorded, 1 TCP/IPv4, 0 ideal
  QComboBox* egress_;   // data: -1 as recorded, 0 a wire per link direction, 1 one interface per stage
};

}  // namespace ps::ui
