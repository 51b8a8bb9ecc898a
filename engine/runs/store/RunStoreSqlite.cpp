#include "engine/runs/store/RunStoreSqlite.h"

#include <sqlite3.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

#include "engine/runs/store/RunStoreError.h"

namespace ps {

namespace {

// Turns a SQLite result code into a message that says what the user can do.
StoreError makeError(sqlite3* db, int rc, const std::string& path, const std::string& doing) {
  const std::string detail = doing + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return StoreError(path + " is damaged or is not a PipeSqueeze run store (" + detail +
                        "). Move it aside (with any -wal/-shm files next to it) or set "
                        "PIPESQUEEZE_STORE to another file.");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StoreError(path + " stayed locked by another process for more than 5 s (" + detail +
                        "). Close other PipeSqueeze windows or commands writing to it and retry.");
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return StoreError(path + " cannot be written (" + detail +
                        "). Check the permissions of the file and its folder, or set "
                        "PIPESQUEEZE_STORE to a writable location.");
    case SQLITE_CANTOPEN:
      return StoreError("cannot open " + path + " (" + detail +
                        "). Check that its folder exists and is writable, or set "
                        "PIPESQUEEZE_STORE to another file.");
    case SQLITE_FULL:
      return StoreError("the disk holding " + path + " is full (" + detail +
                        "). Free some space and retry.");
    case SQLITE_IOERR:
      return StoreError("I/O error on " + path + " (" + detail +
                        "). Check the disk, and keep the store on a local file system "
                        "(SQLite's WAL mode does not work on network shares).");
    default:
      return StoreError("run store " + path + ": " + detail);
  }
}

}  // namespace

namespace {

// A URI naming `path` with `query`: every byte outside the unreserved set percent-encoded, so a path holding '?', '#'
// or '%' names the same file.
std::string fileUri(const std::string& path, const std::string& query) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if (std::isalnum(b) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += c;
    } else {
      uri += '%';
      uri += kHex[b >> 4];
      uri += kHex[b & 0xf];
    }
  }
  return uri + "?" + query;
}

}  // namespace

SqliteDb::SqliteDb(std::string path, Mode mode) : path_(std::move(path)) {
  int rc = SQLITE_OK;
  if (mode == Mode::ReadWrite) {
    rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  } else {
    rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
    // The first read opens the WAL's shared memory; where it cannot be created, read the file as immutable.
    const int probe =
        rc == SQLITE_OK ? sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) : rc;
    if (rc == SQLITE_OK && ((probe & 0xff) == SQLITE_CANTOPEN || (probe & 0xff) == SQLITE_READONLY)) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      rc =
          sqlite3_open_v2(fileUri(path_, "immutable=1").c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    }
  }
  if (rc != SQLITE_OK) {
    StoreError err = makeError(db_, rc, path_, "opening");
    sqlite3_close_v2(db_);  // the handle is allocated even when opening fails
    db_ = nullptr;
    throw err;
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, 5000);  // a GUI, a CLI and a run may share the file
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::fail(int rc, const std::string& doing) const {
  lastFailureBusy_ = (rc & 0xff) == SQLITE_BUSY;
  throw makeError(db_, rc, path_, doing);
}

void SqliteDb::exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, "running \"" + sql.substr(0, 60) + "\"");
}

std::string SqliteDb::queryText(const std::string& sql) {
  SqliteStatement st(*this, sql);
  return st.step() ? st.text(0) : std::string();
}

int64_t SqliteDb::changes() const { return sqlite3_changes64(db_); }
int64_t SqliteDb::lastInsertId() const { return sqlite3_last_insert_rowid(db_); }

SqliteStatement::SqliteStatement(SqliteDb& db, const std::string& sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db.handle(), sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "preparing \"" + sql.substr(0, 60) + "\"");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

namespace {
void checkBind(SqliteDb& db, int rc) {
  if (rc != SQLITE_OK) db.fail(rc, "binding a value");
}
}  // namespace

SqliteStatement& SqliteStatement::bindInt(int i, int64_t v) {
  checkBind(db_, sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

SqliteStatement& SqliteStatement::bindReal(int i, double v) {
  checkBind(db_, std::isnan(v) ? sqlite3_bind_null(stmt_, i) : sqlite3_bind_double(stmt_, i, v));
  return *this;
}

SqliteStatement& SqliteStatement::bindText(int i, const std::string& v) {
  checkBind(db_, sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

SqliteStatement& SqliteStatement::bindBlob(int i, const void* data, std::size_t bytes) {
  checkBind(db_, bytes == 0 ? sqlite3_bind_zeroblob(stmt_, i, 0)
                            : sqlite3_bind_blob64(stmt_, i, data, bytes, SQLITE_TRANSIENT));
  return *this;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(stmt_);
  db_.fail(rc, "running \"" + sql.substr(0, 60) + "\"");
}

void SqliteStatement::run() {
  while (step()) {
  }
}

void SqliteStatement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStatement::isNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

int64_t SqliteStatement::integer(int col) const { return sqlite3_column_int64(stmt_, col); }

double SqliteStatement::real(int col) const {
  return isNull(col) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(stmt_, col);
}

std::string SqliteStatement::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}

const void* SqliteStatement::blobData(int col) const { return sqlite3_column_blob(stmt_, col); }

std::size_t SqliteStatement::blobBytes(int col) const {
  return static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col));
}

SqliteTransaction::SqliteTransaction(SqliteDb& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::Write ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = true;
}

SqliteTransaction::~SqliteTransaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace ps
