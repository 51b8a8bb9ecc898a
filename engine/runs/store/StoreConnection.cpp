#include "engine/runs/store/StoreConnection.h"

#include <filesystem>
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

}  // namespace

StoreConnection::StoreConnection(std::string path) : db_(preparedLocation(path)) {
  checkRunStoreIdentity(db_);  // before anything below writes to the file
  checkRunStoreVersion(db_);
  const std::string mode = db_.queryText("PRAGMA journal_mode=WAL");
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
