#include "engine/runs/store/RunStore.h"
#include "engine/core/RunSummary.h"

#include "engine/core/UserFolders.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/runs/store/RunStoreImpl.h"
#include "engine/runs/store/RunStoreSchema.h"
#include "engine/runs/store/RunStoreSystem.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

const char* const kOrphanReason = "process ended without closing the run";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

void prepareLocation(const std::string& path) {
  if (path.empty())
    throw StoreError("the run store path is empty; pass a file name or set PIPESQUEEZE_STORE");
  if (path == ":memory:") return;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw StoreError("the run store path " + path + " is a folder; give a file inside it, "
                     "e.g. " + (fs::path(path) / "runs.sqlite").string());
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty() || fs::is_directory(parent, ec)) return;
  fs::create_directories(parent, ec);
  if (ec)
    throw StoreError("cannot create the folder " + parent.string() + " for the run store " +
                     path + " (" + ec.message() +
                     "). Create it yourself, or set PIPESQUEEZE_STORE to another file.");
}

// "a, b,,a ,c" -> "a,b,c"
std::string normalizeTags(const std::string& tags) {
  std::string out;
  std::vector<std::string> seen;
  for (const std::string& tag : splitTags(tags)) {
    if (std::find(seen.begin(), seen.end(), tag) != seen.end()) continue;
    out += (out.empty() ? "" : ",") + tag;
    seen.push_back(tag);
  }
  return out;
}

void checkJson(const std::string& text, const std::string& what) {
  if (!text.empty() && !nlohmann::json::accept(text))
    throw StoreError(what + " is not valid JSON; nothing was written. Pass a JSON document "
                            "(or an empty string).");
}

}  // namespace

RunStore::Impl::Impl(std::string path) : db(std::move(path)) {
  checkRunStoreIdentity(db);  // before anything below writes to the file
  const std::string mode = db.queryText("PRAGMA journal_mode=WAL");
  if (mode != "wal" && mode != "memory")
    throw StoreError(db.path() + " could not be switched to WAL mode (SQLite kept '" + mode +
                     "'). Keep the store on a local, writable file system.");
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA foreign_keys=ON");
  migrateRunStore(db);
}

RunStore::RunStore(std::string path) {
  prepareLocation(path);
  impl_ = std::make_unique<Impl>(std::move(path));
}

RunStore::~RunStore() = default;

std::vector<std::string> splitTags(const std::string& tags) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= tags.size()) {
    const std::size_t end = std::min(tags.find(',', start), tags.size());
    const std::string tag = tags.substr(start, end - start);
    const auto first = tag.find_first_not_of(" \t\r\n"), last = tag.find_last_not_of(" \t\r\n");
    if (first != std::string::npos) out.push_back(tag.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

std::string RunStore::defaultPath() {
  if (std::string s = env("PIPESQUEEZE_STORE"); !s.empty()) return s;
  const std::string folder = userDataFolder();
  if (folder.empty())
    throw StoreError("cannot tell where to keep runs: HOME is not set. Set PIPESQUEEZE_STORE "
                     "to a file, e.g. /tmp/pipesqueeze/runs.sqlite.");
  return (fs::path(folder) / "runs.sqlite").string();
}

const std::string& RunStore::path() const { return impl_->db.path(); }

int RunStore::schemaVersion() const {
  return std::stoi(impl_->db.queryText("PRAGMA user_version"));
}

std::string RunStore::integrityCheck() const {
  SqliteStatement st(impl_->db, "PRAGMA integrity_check");
  std::string out;
  while (st.step()) out += (out.empty() ? "" : "\n") + st.text(0);
  return out;
}

int64_t RunStore::createRun(const std::string& name, const std::string& config_json,
                            const std::string& code_version, const std::string& tags,
                            const std::string& notes) {
  checkJson(config_json, "the config of new run '" + name + "'");
  const runstore::ProcessIdentity owner = runstore::currentProcess();
  auto q = impl_->use(
      "INSERT INTO runs(name, tags, notes, created, status, config_json, code_version, "
      "owner_pid, owner_host, owner_start) VALUES(?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9)");
  q->bindText(1, name).bindText(2, normalizeTags(tags)).bindText(3, notes);
  q->bindText(4, runstore::utcNowIso8601()).bindText(5, config_json).bindText(6, code_version);
  q->bindInt(7, owner.pid).bindText(8, owner.host).bindText(9, owner.start);
  q->run();
  return impl_->db.lastInsertId();
}

void RunStore::finishRun(int64_t id, const std::string& status, const std::string& reason,
                         const std::string& summary_json) {
  if (status != run_status::kFinished && status != run_status::kStopped && status != run_status::kDiverged &&
      status != run_status::kFailed)
    throw StoreError("cannot finish run " + std::to_string(id) + " with status '" + status +
                     "'; use one of: finished, stopped, diverged, failed");
  checkJson(summary_json, "the summary of run " + std::to_string(id));
  auto q = impl_->use(
      "UPDATE runs SET status = ?2, status_reason = ?3, summary_json = ?4, finished = ?5 "
      "WHERE id = ?1");
  q->bindInt(1, id).bindText(2, status).bindText(3, reason).bindText(4, summary_json);
  q->bindText(5, runstore::utcNowIso8601());
  q->run();
  if (impl_->db.changes() == 0) impl_->unknownRun(id);
}

void RunStore::append(int64_t run_id, const std::vector<MetricPoint>& metrics, const std::vector<EventRow>& events,
                      const std::vector<HistogramRow>& histograms, const std::vector<TraceRow>& traces) {
  SqliteTransaction tx(impl_->db);
  impl_->requireRun(run_id);
  if (!metrics.empty()) {
    auto q = impl_->use(
        "INSERT INTO metrics(run_id, step, key, value, wall_s, emulated_s) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    for (const MetricPoint& m : metrics) {
      q->bindInt(1, run_id).bindInt(2, m.step).bindText(3, m.key).bindReal(4, m.value);
      q->bindReal(5, m.wall_s).bindReal(6, m.emulated_s).run();
      q->reset();
    }
  }
  if (!events.empty()) {
    auto q = impl_->use(
        "INSERT INTO events(run_id, step, wall_s, kind, detail_json) VALUES(?1, ?2, ?3, ?4, ?5)");
    for (const EventRow& e : events) {
      q->bindInt(1, run_id).bindInt(2, e.step).bindReal(3, e.wall_s).bindText(4, e.kind);
      q->bindText(5, e.detail_json).run();
      q->reset();
    }
  }
  if (!histograms.empty()) {
    auto q = impl_->use(
        "INSERT INTO histograms(run_id, step, name, lo, hi, counts) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    for (const HistogramRow& h : histograms) {
      q->bindInt(1, run_id).bindInt(2, h.step).bindText(3, h.name).bindReal(4, h.lo);
      q->bindReal(5, h.hi).bindBlob(6, h.counts.data(), h.counts.size() * sizeof(float)).run();
      q->reset();
    }
  }
  if (!traces.empty()) {
    auto q = impl_->use("INSERT INTO step_traces(run_id, step, epoch, trace) VALUES(?1, ?2, ?3, ?4)");
    for (const TraceRow& t : traces) {
      q->bindInt(1, run_id).bindInt(2, t.step).bindInt(3, t.epoch).bindBlob(4, t.trace.data(), t.trace.size()).run();
      q->reset();
    }
  }
  tx.commit();
}

void RunStore::addCheckpoint(int64_t run_id, const CheckpointRow& checkpoint) {
  impl_->requireRun(run_id);
  auto q = impl_->use("INSERT INTO checkpoints(run_id, step, path) VALUES(?1, ?2, ?3)");
  q->bindInt(1, run_id).bindInt(2, checkpoint.step).bindText(3, checkpoint.path).run();
}

void RunStore::rename(int64_t id, const std::string& name) {
  impl_->updateText(id, "UPDATE runs SET name = ?2 WHERE id = ?1", name);
}

void RunStore::setTags(int64_t id, const std::string& tags) {
  impl_->updateText(id, "UPDATE runs SET tags = ?2 WHERE id = ?1", normalizeTags(tags));
}

void RunStore::setNotes(int64_t id, const std::string& notes) {
  impl_->updateText(id, "UPDATE runs SET notes = ?2 WHERE id = ?1", notes);
}

void RunStore::deleteRun(int64_t id) {
  auto q = impl_->use("DELETE FROM runs WHERE id = ?1");  // ON DELETE CASCADE does the rest
  q->bindInt(1, id).run();
  if (impl_->db.changes() == 0) impl_->unknownRun(id);
}

int RunStore::reapOrphans() {
  std::vector<int64_t> orphans;
  {
    auto q = impl_->use(
        "SELECT id, owner_pid, owner_host, owner_start FROM runs WHERE status = 'running'");
    while (q->step()) {
      const runstore::ProcessIdentity owner{q->integer(1), q->text(2), q->text(3)};
      if (!runstore::processAlive(owner)) orphans.push_back(q->integer(0));
    }
  }
  if (orphans.empty()) return 0;  // no write lock taken in the common case
  int marked = 0;
  SqliteTransaction tx(impl_->db);
  auto q = impl_->use(
      "UPDATE runs SET status = 'failed', status_reason = ?2, finished = ?3 "
      "WHERE id = ?1 AND status = 'running'");
  const std::string now = runstore::utcNowIso8601();
  for (int64_t id : orphans) {
    q->bindInt(1, id).bindText(2, kOrphanReason).bindText(3, now).run();
    marked += static_cast<int>(impl_->db.changes());
    q->reset();
  }
  tx.commit();
  return marked;
}

}  // namespace ps
