#pragma once
// Schema of the run store, versioned with PRAGMA user_version.
#include <vector>

namespace ps {

class SqliteDb;

struct RunStoreMigration {
  int version;        // user_version after this step; steps are numbered 1, 2, 3...
  const char* sql;    // applied inside the same transaction that bumps user_version
};

// Every migration, oldest first. To change the schema, append a step; never edit a shipped one.
const std::vector<RunStoreMigration>& runStoreMigrations();
int runStoreLatestVersion();

// Refuses a database that is not a run store (nor a new, empty file) before anything changes it: no journal switch,
// no migration, the file stays byte for byte as it was.
void checkRunStoreIdentity(SqliteDb& db);
// Refuses a store a newer build wrote (its schema version above this build's). Reads only: call it before anything
// writes to the file (the switch to WAL rewrites header bytes).
void checkRunStoreVersion(SqliteDb& db);

// Brings `db` up to runStoreLatestVersion(), one transaction per step, so a crash mid-way
// leaves the file at the last completed version. Throws StoreError if the file was written
// by a newer PipeSqueeze than this one.
void migrateRunStore(SqliteDb& db);

}  // namespace ps
