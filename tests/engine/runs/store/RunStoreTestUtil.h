#pragma once
// Helpers shared by the RunStore tests.
#include "engine/runs/store/RunStoreError.h"
#include "engine/runs/store/RunStoreSchema.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps::test {

// The StoreError message thrown by `f`, or "" if it threw nothing.
template <typename F>
std::string storeErrorOf(F&& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

// A file's bytes, to hold a store to what it was.
inline std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh folder under the system temp folder, removed with everything in it.
class RunStoreTempDir {
 public:
  RunStoreTempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "RunStoreTest-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = buf.data();
  }
  ~RunStoreTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  RunStoreTempDir(const RunStoreTempDir&) = delete;
  RunStoreTempDir& operator=(const RunStoreTempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullopt, unsets) an environment variable and restores it afterwards.
class RunStoreEnvGuard {
 public:
  RunStoreEnvGuard(std::string name, const std::optional<std::string>& value)
      : name_(std::move(name)) {
    if (const char* old = getenv(name_.c_str())) old_ = old;
    set(value);
  }
  ~RunStoreEnvGuard() { set(old_); }
  RunStoreEnvGuard(const RunStoreEnvGuard&) = delete;
  RunStoreEnvGuard& operator=(const RunStoreEnvGuard&) = delete;

 private:
  void set(const std::optional<std::string>& v) {
    if (v) setenv(name_.c_str(), v->c_str(), 1);
    else unsetenv(name_.c_str());
  }
  std::string name_;
  std::optional<std::string> old_;
};

// A raw SQLite connection, to look at or tamper with a store behind RunStore's back.
class RunStoreRawDb {
 public:
  explicit RunStoreRawDb(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK)
      throw std::runtime_error("cannot open " + path);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RunStoreRawDb() { sqlite3_close(db_); }
  RunStoreRawDb(const RunStoreRawDb&) = delete;
  RunStoreRawDb& operator=(const RunStoreRawDb&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(sql + ": " + msg);
    }
  }
  // First column of the first row, as text ("" if no row).
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }
  int64_t count(const std::string& sql) { return std::stoll(text(sql)); }

 private:
  sqlite3* db_ = nullptr;
};

// A store as the first schema left it (version 1: no step traces), for the tests of what later builds make of one.
inline void writeVersionOneStore(const std::string& path) {
  RunStoreRawDb raw(path);
  raw.exec("PRAGMA application_id = 1347637586");
  raw.exec(runStoreMigrations().front().sql);
  raw.exec("PRAGMA user_version = 1");
}

}  // namespace ps::test
