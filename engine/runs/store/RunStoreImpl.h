#pragma once
// Private to the run store implementation (RunStore*.cpp); not part of the public API.
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

struct RunStore::Impl {
  explicit Impl(std::string path);  // opens and configures; RunStore.cpp

  SqliteDb db;
  // Prepared once, reused for every call (keyed by SQL text). Declared after `db` so the
  // statements are finalized before the connection closes.
  std::map<std::string, std::unique_ptr<SqliteStatement>> cache;

  StatementUse use(const std::string& sql) {
    auto& slot = cache[sql];
    if (!slot) slot = std::make_unique<SqliteStatement>(db, sql);
    return StatementUse(*slot);
  }

  [[noreturn]] void unknownRun(int64_t id) const {
    throw StoreError("no run with id " + std::to_string(id) + " in " + db.path() +
                     "; list runs with: pipesqueeze-cli runs list");
  }

  bool exists(int64_t id) {
    auto q = use("SELECT 1 FROM runs WHERE id = ?1");
    q->bindInt(1, id);
    return q->step();
  }

  void requireRun(int64_t id) {
    if (!exists(id)) unknownRun(id);
  }

  // Runs `sql` (?1 = run id, ?2 = text) on one run; throws if there is no such run.
  void updateText(int64_t id, const std::string& sql, const std::string& value) {
    auto q = use(sql);
    q->bindInt(1, id).bindText(2, value).run();
    if (db.changes() == 0) unknownRun(id);
  }
};

}  // namespace ps
