#include "app/ui/WheelGuard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QScrollBar>

namespace ps::ui {

namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    auto* input = qobject_cast<QWidget*>(watched);
    if (!input || input->hasFocus()) return false;
    // Not the input's: the nearest scroll area's vertical bar scrolls, as if the input were not there.
    for (QWidget* w = input->parentWidget(); w; w = w->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
        QCoreApplication::sendEvent(area->verticalScrollBar(), event);
        break;
      }
    return true;
  }
};

WheelGuard* guard() {
  static auto* instance = new WheelGuard(QCoreApplication::instance());  // lives as long as the application
  return instance;
}

}  // namespace

void guardWheel(QWidget* input) {
  input->setFocusPolicy(Qt::StrongFocus);
  input->installEventFilter(guard());
}

void guardWheelIn(QWidget* panel) {
  for (QWidget* w : panel->findChildren<QWidget*>())
    if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSlider*>(w))
      if (!qobject_cast<QScrollBar*>(w)) guardWheel(w);
}

}  // namespace ps::ui
