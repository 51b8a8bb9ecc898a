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

// Brings `db` up to runStoreLatestVersion(), one transaction per step, so a crash mid-way
// leaves the file at the last completed version. Throws StoreError if the file was written
// by a newer PipeSqueeze than this one.
void migrateRunStore(SqliteDb& db);

}  // namespace ps
