#pragma once
// ps::StoreConnection: one open run-store file, used by RunStore and nothing outside this folder.
//
// Opening for writing prepares the location (parent folders, a clear error for a folder or an empty path), checks the
// file is a run store of a version this build knows before writing to it, switches it to WAL and migrates it to the
// current schema. Opening read-only makes the same checks and writes nothing. Statements are prepared once per
// connection and reused.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreSqlite.h"

namespace ps {

// A cached prepared statement in use; resets it (ending any read it holds open) when done.
class StatementUse {
 public:
  explicit StatementUse(SqliteStatement& s) : s_(s) {}
  ~StatementUse() { s_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  SqliteStatement* operator->() const { return &s_; }
  SqliteStatement& operator*() const { return s_; }

 private:
  SqliteStatement& s_;
};

class StoreConnection {
 public:
  StoreConnection(std::string path, StoreAccess access);

  SqliteDb& db() { return db_; }
  const std::string& path() const { return db_.path(); }
  StoreAccess access() const { return access_; }

  // The statement for `sql`, prepared on first use.
  StatementUse use(const std::string& sql);

  [[noreturn]] void unknownRun(int64_t id) const;
  void requireRun(int64_t id);
  // Runs `sql` (?1 = run id, ?2 = text) on one run; throws if there is no such run.
  void updateText(int64_t id, const std::string& sql, const std::string& value);

 private:
  StoreAccess access_;
  SqliteDb db_;
  // Keyed by SQL text. Declared after `db_` so the statements are finalized before the connection closes.
  std::map<std::string, std::unique_ptr<SqliteStatement>> cache_;
};

}  // namespace ps
