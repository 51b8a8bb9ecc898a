#pragma once
// `runs timeline` (one saved step's decomposition, as recorded and for another network or codec) and
// `runs export --trace` (saved steps as a Chrome/Perfetto trace file).
#include "app/cli/RunsCommand.h"
#include "engine/runs/store/RunStore.h"

namespace ps::cli {

void printTimeline(const RunStore& store, const RunsOptions& o);
void exportTrace(const RunStore& store, const RunsOptions& o);

}  // namespace ps::cli
