#pragma once
// ps::writeRunCsv: one run's metrics as a wide CSV table, read from the run store.
#include <cstdint>
#include <iosfwd>

namespace ps {

class RunStore;

// One row per step; columns step,wall_s,emulated_s then every metric key sorted. wall_s / emulated_s of a step are
// the largest recorded at that step. A cell is empty where a key has no value at that step; if a key repeats at a step
// the last value wins. Numbers use the shortest text that reads back exactly (NaN as "nan"). RFC-4180 quoting, "\n"
// lines. Header and rows come from one snapshot, even while the run keeps writing. Throws StoreError for an unknown
// run or a failed write to `out`.
void writeRunCsv(const RunStore& store, int64_t run_id, std::ostream& out);

}  // namespace ps
