#pragma once
// ps::ui::NetworkControls: the network the compare view re-times its runs for (engine/runs/trace/Retime.h): a tick
// to re-time at all, the link bandwidth in Mbit/s and the latency in ms. Unticked, runs show their recorded
// emulated time. Spin boxes report when a value is entered or stepped, not at every keystroke.
#include "engine/runs/trace/Retime.h"

#include <QWidget>

class QCheckBox;
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

 Q_SIGNALS:
  void networkChanged();

 private:
  QCheckBox* on_;
  QDoubleSpinBox* bandwidth_;
  QDoubleSpinBox* latency_;
};

}  // namespace ps::ui
