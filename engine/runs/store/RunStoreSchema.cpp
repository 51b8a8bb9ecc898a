#include "engine/runs/store/RunStoreSchema.h"

#include <string>

#include "engine/runs/store/RunStoreError.h"
#include "engine/runs/store/RunStoreSqlite.h"

namespace ps {

namespace {

// Version 1: the initial schema.
// NaN values are stored as NULL (SQLite has no NaN) and read back as NaN.
// runs.owner_* identify the process that created a run, so reapOrphans() can tell whether
// a run left 'running' still has a live writer.
const char* const kSchemaV1 = R"sql(
PRAGMA application_id = 1347637586;  -- 'PSQR'
CREATE TABLE runs(
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  name          TEXT NOT NULL DEFAULT '',
  tags          TEXT NOT NULL DEFAULT '',
  notes         TEXT NOT NULL DEFAULT '',
  created       TEXT NOT NULL,
  finished      TEXT,
  status        TEXT NOT NULL DEFAULT 'running',
  status_reason TEXT NOT NULL DEFAULT '',
  config_json   TEXT NOT NULL DEFAULT '',
  code_version  TEXT NOT NULL DEFAULT '',
  summary_json  TEXT NOT NULL DEFAULT '',
  owner_pid     INTEGER,
  owner_host    TEXT NOT NULL DEFAULT '',
  owner_start   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_created ON runs(created);
CREATE INDEX runs_by_status ON runs(status);

CREATE TABLE metrics(
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step       INTEGER NOT NULL,
  key        TEXT NOT NULL,
  value      REAL,
  wall_s     REAL,
  emulated_s REAL
);
CREATE INDEX metrics_by_run_key_step ON metrics(run_id, key, step);

CREATE TABLE events(
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step        INTEGER NOT NULL,
  wall_s      REAL,
  kind        TEXT NOT NULL,
  detail_json TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_by_run_step ON events(run_id, step);

CREATE TABLE histograms(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step   INTEGER NOT NULL,
  name   TEXT NOT NULL,
  lo     REAL,
  hi     REAL,
  counts BLOB NOT NULL  -- float32, native byte order (little-endian on every supported target)
);
CREATE INDEX histograms_by_run_name_step ON histograms(run_id, name, step);

CREATE TABLE checkpoints(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step   INTEGER NOT NULL,
  path   TEXT NOT NULL
);
CREATE INDEX checkpoints_by_run_step ON checkpoints(run_id, step);
)sql";

// Version 2: what a step's emulated time was made of (engine/core/StepTrace.h), one encoded trace per step, so
// a saved run can be re-timed for another network. Runs saved before have none.
const char* const kSchemaV2 = R"sql(
CREATE TABLE step_traces(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step   INTEGER NOT NULL,
  epoch  INTEGER NOT NULL,
  trace  BLOB NOT NULL
);
CREATE INDEX step_traces_by_run_step ON step_traces(run_id, step);
)sql";

constexpr const char* kApplicationId = "1347637586";  // 'PSQR', set by the first schema

int userVersion(SqliteDb& db) { return std::stoi(db.queryText("PRAGMA user_version")); }

void checkNotNewer(SqliteDb& db, int current, int latest) {
  if (current <= latest) return;
  throw StoreError(db.path() + " was written by a newer PipeSqueeze (store schema version " +
                   std::to_string(current) + ", this build knows up to " +
                   std::to_string(latest) +
                   "). Upgrade PipeSqueeze, or set PIPESQUEEZE_STORE to another file.");
}

}  // namespace

void checkRunStoreIdentity(SqliteDb& db) {
  // One statement, so one snapshot: read one after another, the three could straddle another connection making the
  // file a store (its id still 0, its tables already there), and a store being made would look foreign.
  const std::string seen = db.queryText(
      "SELECT (SELECT application_id FROM pragma_application_id) || ' ' || (SELECT user_version FROM "
      "pragma_user_version) || ' ' || (SELECT count(*) FROM sqlite_master)");
  const std::string id = seen.substr(0, seen.find(' '));
  if (id == kApplicationId) return;
  if (seen == "0 0 0") return;  // a new file: the first migration makes it ours
  throw StoreError(db.path() + " is an SQLite database but not a PipeSqueeze run store (application id " + id +
                   "); it was left as it was. Set PIPESQUEEZE_STORE to another file (or move this one aside).");
}

void checkRunStoreVersion(SqliteDb& db) {
  checkNotNewer(db, userVersion(db), runStoreLatestVersion());
}

const std::vector<RunStoreMigration>& runStoreMigrations() {
  static const std::vector<RunStoreMigration> steps = {
      {1, kSchemaV1},
      {2, kSchemaV2},
  };
  return steps;
}

int runStoreLatestVersion() { return runStoreMigrations().back().version; }

void migrateRunStore(SqliteDb& db) {
  const int latest = runStoreLatestVersion();
  const int found = userVersion(db);
  if (found == latest) return;  // the common case: no write lock needed
  checkNotNewer(db, found, latest);
  for (const RunStoreMigration& m : runStoreMigrations()) {
    SqliteTransaction tx(db);
    // Re-read under the write lock: another process may have migrated meanwhile.
    const int current = userVersion(db);
    checkNotNewer(db, current, latest);
    if (current >= m.version) continue;
    if (current == 0 && db.queryText("SELECT count(*) FROM sqlite_master") != "0") {
      throw StoreError(db.path() + " is an SQLite database but not a PipeSqueeze run store. "
                       "Set PIPESQUEEZE_STORE to another file (or move this one aside).");
    }
    if (current != m.version - 1) {
      throw StoreError(db.path() + " has store schema version " + std::to_string(current) +
                       " but no migration leads from it to " + std::to_string(m.version) +
                       ". Move the file aside, or set PIPESQUEEZE_STORE to another file.");
    }
    db.exec(m.sql);
    db.exec("PRAGMA user_version = " + std::to_string(m.version));
    tx.commit();
  }
}

}  // namespace ps
