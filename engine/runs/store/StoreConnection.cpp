#include "engine/runs/store/StoreConnection.h"

#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>

#include "engine/runs/store/RunStoreError.h"
#include "engine/runs/store/RunStoreSchema.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

// Parent folders exist, and the path is not one a store cannot live at; before SQLite sees it.
const std::string& preparedLocation(const std::string& path) {
  if (path.empty()) throw StoreError("the run store path is empty; pass a file name or set PIPESQUEEZE_STORE");
  if (path == ":memory:") return path;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw StoreError("the run store path " + path +
                     " is a folder; give a file inside it, "
                     "e.g. " +
                     (fs::path(path) / "runs.sqlite").string());
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty() || fs::is_directory(parent, ec)) return path;
  fs::create_directories(parent, ec);
  if (ec)
    throw StoreError("cannot create the folder " + parent.string() + " for the run store " + path + " (" +
                     ec.message() + "). Create it yourself, or set PIPESQUEEZE_STORE to another file.");
  return path;
}

// A store opened read-only must already be there, as a regular file.
const std::string& existingStore(const std::string& path) {
  std::error_code ec;
  if (path.empty()) throw StoreError("the run store path is empty; pass a file name or set PIPESQUEEZE_STORE");
  if (!fs::is_regular_file(path, ec))
    throw StoreError("no run store file at " + path + "; train a run first or pass --store FILE");
  return path;
}

void checkCurrentForReading(SqliteDb& db) {
  const int found = std::stoi(db.queryText("PRAGMA user_version"));
  if (found == runStoreLatestVersion()) return;
  throw StoreError(db.path() + " has store schema version " + std::to_string(found) + " and cannot be written, so " +
                   "it cannot be upgraded to version " + std::to_string(runStoreLatestVersion()) +
                   " for reading. Open it once where it can be written, or copy it somewhere writable.");
}

}  // namespace

StoreConnection::StoreConnection(std::string path, StoreAccess access)
    : access_(access),
      db_(access == StoreAccess::ReadWrite ? preparedLocation(path) : existingStore(path),
          access == StoreAccess::ReadWrite ? SqliteDb::Mode::ReadWrite : SqliteDb::Mode::ReadOnly) {
  checkRunStoreIdentity(db_);  // before anything below writes to the file
  checkRunStoreVersion(db_);
  if (access == StoreAccess::ReadOnly) {
    checkCurrentForReading(db_);
    db_.exec("PRAGMA query_only=ON");
    return;
  }
  // Switching a new file to WAL takes it exclusively for a moment, and SQLite answers a second connection doing the
  // same at that moment with "busy" at once, without its busy handler (where waiting could deadlock): retried here
  // for as long as the busy timeout would have waited.
  std::string mode;
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);;) {
    try {
      mode = db_.queryText("PRAGMA journal_mode=WAL");
      break;
    } catch (const StoreError&) {
      if (!db_.lastFailureWasBusy() || std::chrono::steady_clock::now() > until) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (mode != "wal" && mode != "memory")
    throw StoreError(db_.path() + " could not be switched to WAL mode (SQLite kept '" + mode +
                     "'). Keep the store on a local, writable file system.");
  db_.exec("PRAGMA synchronous=NORMAL");
  db_.exec("PRAGMA foreign_keys=ON");
  migrateRunStore(db_);
}

StatementUse StoreConnection::use(const std::string& sql) {
  auto& slot = cache_[sql];
  if (!slot) slot = std::make_unique<SqliteStatement>(db_, sql);
  return StatementUse(*slot);
}

void StoreConnection::unknownRun(int64_t id) const {
  throw StoreError("no run with id " + std::to_string(id) + " in " + db_.path() +
                   "; list runs with: pipesqueeze-cli runs list");
}

void StoreConnection::requireRun(int64_t id) {
  auto q = use("SELECT 1 FROM runs WHERE id = ?1");
  q->bindInt(1, id);
  if (!q->step()) unknownRun(id);
}

void StoreConnection::updateText(int64_t id, const std::string& sql, const std::string& value) {
  auto q = use(sql);
  q->bindInt(1, id).bindText(2, value).run();
  if (db_.changes() == 0) unknownRun(id);
}

}  // namespace ps
