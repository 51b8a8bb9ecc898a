#pragma once
// Exports of one run to files, free of dialogs (the panel asks for the path, tests pass one). Each returns an
// empty string on success, else a message saying what went wrong and what to do.
#include "engine/runs/store/RunStore.h"

#include <QList>
#include <QString>

#include <cstdint>

namespace ps::ui {

// The run's metrics as the store's wide CSV (one row per step, a column per metric key).
QString exportRunCsv(const RunStore& store, int64_t runId, const QString& path);
// The run's full validated config, pretty-printed: a preset that replays the run
// (`pipesqueeze-cli train --preset FILE`).
QString exportRunConfig(const RunStore& store, int64_t runId, const QString& path);
// Saved steps' timelines (a dozen spread over the run) as a Chrome/Perfetto trace-event file, as
// `runs export --trace` writes it (engine/runs/trace/StepTimelines.h).
QString exportRunTrace(const RunStore& store, int64_t runId, const QString& path);
// Each run as a TensorBoard event file under `dir` (one folder per run, as `runs export --tensorboard` writes them).
QString exportRunsTensorBoard(const RunStore& store, const QList<qint64>& runIds, const QString& dir);

}  // namespace ps::ui
