#pragma once
// ps::RunStore: every training run, its metrics, events, histograms and checkpoints, kept in
// one SQLite file.
//
// - WAL mode, synchronous=NORMAL, 5 s busy timeout: a GUI and a CLI can read while a run
//   writes; a killed writer never corrupts the file and loses at most its last batch.
// - Schema versioned with PRAGMA user_version (see RunStoreSchema.h).
// - One instance per thread at a time; open another instance for a concurrent reader.
//   Never use an instance across fork(): open a new one in the child.
// - Unknown run ids throw StoreError("no run with id N in <path>; ..."), except run(id).
// - NaN values are stored (as NULL) and read back as NaN.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/Metrics.h"
#include "engine/runs/store/RunStoreError.h"

namespace ps {

class StoreConnection;
class SqliteTransaction;

// ReadOnly opens an existing store without writing a byte of it (no journal switch, no migration, no reaping): for
// listing, showing and exporting a store on a read-only file, folder or file system. Every write then throws.
enum class StoreAccess { ReadWrite, ReadOnly };

// The tags of a comma separated list as the store keeps them: "a, b,,a" -> {"a", "b", "a"} (trimmed, empty ones
// dropped, in order; repeats are the caller's to drop).
std::vector<std::string> splitTags(const std::string& tags);

struct RunInfo {
  int64_t id = 0;
  std::string name, tags, notes;
  std::string created, finished;  // ISO-8601 UTC; finished is "" while running
  std::string status;             // running | finished | stopped | diverged | failed
  std::string status_reason, config_json, code_version, summary_json;
};

struct EventRow {
  int64_t step;
  double wall_s;
  std::string kind;
  std::string detail_json;
};

struct HistogramRow {
  int64_t step;
  std::string name;
  double lo, hi;
  std::vector<float> counts;
};

// One step's trace (engine/core/StepTrace.h), encoded: what re-timing the run for another network needs.
struct TraceRow {
  int64_t step;
  int64_t epoch;
  std::vector<uint8_t> trace;
};

struct CheckpointRow {
  int64_t step;
  std::string path;
};

class RunStore {
 public:
  // ReadWrite: creates parent folders, opens or creates the file and migrates it to the current schema. ReadOnly: opens
  // an existing store of this build's schema version as it is (an older one is refused: it cannot be upgraded).
  explicit RunStore(std::string path, StoreAccess access = StoreAccess::ReadWrite);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // $PIPESQUEEZE_STORE, else $XDG_DATA_HOME/pipesqueeze/runs.sqlite,
  // else $HOME/.local/share/pipesqueeze/runs.sqlite.
  static std::string defaultPath();

  // ReadOnly where a store already at `path` cannot be written by this process (its file, the folder SQLite keeps its
  // WAL in, or its file system), so that it can still be read; ReadWrite otherwise (a new store is created).
  static StoreAccess accessFor(const std::string& path);

  const std::string& path() const;
  bool readOnly() const;
  int schemaVersion() const;
  std::string integrityCheck() const;  // "ok" when PRAGMA integrity_check finds nothing wrong

  // Starts a run with status 'running', owned by this process. Tags are comma separated;
  // blanks around each tag and empty or repeated tags are dropped.
  int64_t createRun(const std::string& name, const std::string& config_json,
                    const std::string& code_version, const std::string& tags = "",
                    const std::string& notes = "");
  // status: finished | stopped | diverged | failed. summary_json: final figures ("" for none).
  void finishRun(int64_t id, const std::string& status, const std::string& reason,
                 const std::string& summary_json);

  // Batched writes: each call is ONE transaction.
  void append(int64_t run_id, const std::vector<MetricPoint>& metrics, const std::vector<EventRow>& events,
              const std::vector<HistogramRow>& histograms, const std::vector<TraceRow>& traces = {});
  void addCheckpoint(int64_t run_id, const CheckpointRow& checkpoint);

  std::vector<RunInfo> listRuns() const;  // newest first
  std::optional<RunInfo> run(int64_t id) const;
  // Ordered by step, then key; in insertion order where both repeat.
  std::vector<MetricPoint> metrics(int64_t run_id, const std::string& key_prefix = "") const;
  // The same points in the same order, one at a time: for readers that stream a long run instead of holding it.
  void forEachMetric(int64_t run_id, const std::string& key_prefix,
                     const std::function<void(const MetricPoint&)>& visit) const;
  std::vector<std::string> metricKeys(int64_t run_id) const;  // sorted
  std::vector<EventRow> events(int64_t run_id) const;          // by step, then insertion
  std::vector<HistogramRow> histograms(int64_t run_id, const std::string& name_prefix = "") const;
  std::vector<CheckpointRow> checkpoints(int64_t run_id) const;
  std::vector<TraceRow> traces(int64_t run_id) const;  // by step; empty for runs saved before traces were kept

  void rename(int64_t id, const std::string& name);
  void setTags(int64_t id, const std::string& tags);
  void setNotes(int64_t id, const std::string& notes);
  void deleteRun(int64_t id);  // with all its metrics, events, histograms and checkpoints

  // Runs left 'running' by a process that died become 'failed' with reason
  // "process ended without closing the run". Only runs whose owning process (pid, on this
  // host) is gone are touched. Returns how many runs were marked.
  int reapOrphans();

  // While one is alive, every read of this store sees the same state, even while other processes write: for readers
  // that make several queries of one run (an export's header and its rows). Not for use around writes.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(const RunStore& store);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    std::unique_ptr<SqliteTransaction> transaction_;
  };

 private:
  std::unique_ptr<StoreConnection> connection_;
};

}  // namespace ps
