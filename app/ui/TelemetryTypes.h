#pragma once
// The engine's telemetry value structs, registered with Qt so queued signals can carry them across threads.
#include "engine/core/Telemetry.h"

#include <QMetaType>

Q_DECLARE_METATYPE(ps::StepRecord)
Q_DECLARE_METATYPE(ps::EvalRecord)
Q_DECLARE_METATYPE(ps::HistogramRecord)
Q_DECLARE_METATYPE(ps::EventRecord)
Q_DECLARE_METATYPE(ps::StatusRecord)
Q_DECLARE_METATYPE(ps::ProgressRecord)

namespace ps::ui {
void registerTelemetryTypes();  // once, before the first queued connection
}
