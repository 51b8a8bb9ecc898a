#pragma once
// Stable colours: a run keeps its colour in every chart and every session (chosen from its id), and series within
// one chart (links, stages) take successive colours of the same qualitative palette (Tableau 10).
#include <QColor>

#include <cstdint>

namespace ps::ui {

QColor paletteColor(int index);          // index >= 0, wraps around the palette
QColor runColor(int64_t runId);          // the same colour for a run everywhere
QColor faint(const QColor& colour);      // the translucent version used behind a smoothed line

}  // namespace ps::ui
