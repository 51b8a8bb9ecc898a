#pragma once
// Thin RAII wrappers over the SQLite C API, used only by the run store implementation.
// Every failure becomes a ps::StoreError that names the database file.
#include <cstddef>
#include <cstdint>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace ps {

class SqliteDb {
 public:
  // ReadWrite: opens (creating if missing) the database at `path`. ReadOnly: opens an existing file without ever
  // writing to it or creating one. A WAL database whose readers cannot have the shared-memory file (a folder or file
  // system this process cannot write) is then opened immutable: SQLite trusts that nothing writes it meanwhile, which
  // is what such a location means.
  enum class Mode { ReadWrite, ReadOnly };
  explicit SqliteDb(std::string path, Mode mode = Mode::ReadWrite);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  void exec(const std::string& sql);               // statements without results
  std::string queryText(const std::string& sql);   // first column of the first row ("" if none)
  int64_t changes() const;
  int64_t lastInsertId() const;
  // Throws a StoreError for SQLite result code `rc`; `doing` says what was attempted.
  [[noreturn]] void fail(int rc, const std::string& doing) const;
  // Whether the last failure thrown was the file being locked by another connection (SQLITE_BUSY).
  bool lastFailureWasBusy() const { return lastFailureBusy_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  mutable bool lastFailureBusy_ = false;
};

class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are 1-based, as in SQLite.
  SqliteStatement& bindInt(int i, int64_t v);
  SqliteStatement& bindReal(int i, double v);  // NaN is stored as NULL and read back as NaN
  SqliteStatement& bindText(int i, const std::string& v);
  SqliteStatement& bindBlob(int i, const void* data, std::size_t bytes);

  bool step();        // true while a row is available; throws on error
  void run();         // step() for statements that return no rows
  void reset() noexcept;  // ready to run again, bindings cleared

  // Columns are 0-based. NULL reads as 0 / NaN / "" / empty blob.
  bool isNull(int col) const;
  int64_t integer(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  const void* blobData(int col) const;
  std::size_t blobBytes(int col) const;

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Write: BEGIN IMMEDIATE (takes the write lock now, so it never fails half-way upgrading).
// Read: BEGIN (one consistent snapshot for several queries; never blocks a writer in WAL).
// ROLLBACK on destruction unless commit() was called.
class SqliteTransaction {
 public:
  enum class Kind { Write, Read };
  explicit SqliteTransaction(SqliteDb& db, Kind kind = Kind::Write);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteDb& db_;
  bool open_ = false;
};

}  // namespace ps
