#pragma once
// `runs breakeven ID...`: the runs re-timed for a range of bandwidths, each one's time to a target, the winner per
// bandwidth and where each compressed run stops beating each uncompressed one (engine/runs/trace/Breakeven.h).
#include "app/cli/RunsCommand.h"
#include "engine/runs/store/RunStore.h"

namespace ps::cli {

void printBreakeven(const RunStore& store, const RunsOptions& o);

}  // namespace ps::cli
