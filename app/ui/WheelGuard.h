#pragma once
// Inputs in a scrolling panel that the mouse wheel changes only once they have focus: scrolling the settings past a
// spin box or a combo box must not change it (a scroll once changed the micro-batches from 4 to 2). The wheel over an
// unfocused input scrolls the panel instead; a click gives the input focus and the wheel to it.
class QWidget;

namespace ps::ui {

// Guards `input` (a spin box, combo box or slider): focus by click or tab only, and the wheel as above.
void guardWheel(QWidget* input);
// Guards every spin box, combo box and slider inside `panel`.
void guardWheelIn(QWidget* panel);

}  // namespace ps::ui
