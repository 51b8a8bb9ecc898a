#pragma once
// What the Timeline tab draws and says about a step's timeline (engine/core/Timeline.h): Gantt bands for the chart
// adapter (a row per stage, then a row per link direction) on the emulated or the wall clock, and the decomposition
// as text.
#include "app/ui/charts/GanttWidget.h"
#include "engine/core/Timeline.h"

#include <QColor>
#include <QString>

#include <utility>
#include <vector>

namespace ps::ui {

// The bar kinds of engine/core/Timeline.h in their order, then the wire, with their colours.
const std::vector<std::pair<QString, QColor>>& timelineKinds();

// The step on the emulated clock: each lane's bars (idle ones included) and each message from its first byte on the
// wire to its arrival, outlined red on link directions whose codec costs more than it saves.
GanttBand emulatedBand(const Timeline& t, const QString& title);
// The step where it ran on this machine's wall clock: each lane's measured events (the gaps are its waits), each
// message in flight from the end of its encode to the start of its decode.
GanttBand wallBand(const Timeline& t, const QString& title);

// "recorded (100 Mbit/s, 0.1 ms): step …; bubble …; critical path …" and a line per link direction.
QString describeTimeline(const char* title, const Timeline& t);
// The same as rich text: headlines bold, link directions whose codec costs more than it saves in red.
QString decompositionHtml(const QString& text);

QString formatMs(double seconds);  // "12.34 ms", three decimals under 10 ms
QString formatShare(double fraction);
QString describeNetwork(const LinkModel& m);

}  // namespace ps::ui
