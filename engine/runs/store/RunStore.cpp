// RunStore: runs written and read over one connection to the store file.
#include "engine/runs/store/RunStore.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include <unistd.h>

#include "engine/core/RunSummary.h"
#include "engine/core/UserFolders.h"
#include "engine/runs/store/RunStoreSystem.h"
#include "engine/runs/store/StoreConnection.h"

namespace fs = std::filesystem;

namespace ps {

namespace {

const char* const kOrphanReason = "process ended without closing the run";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
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

const char* const kRunColumns =
    "SELECT id, name, tags, notes, created, finished, status, status_reason, config_json, "
    "code_version, summary_json FROM runs ";

RunInfo readRun(const SqliteStatement& q) {
  RunInfo r;
  r.id = q.integer(0);
  r.name = q.text(1);
  r.tags = q.text(2);
  r.notes = q.text(3);
  r.created = q.text(4);
  r.finished = q.text(5);
  r.status = q.text(6);
  r.status_reason = q.text(7);
  r.config_json = q.text(8);
  r.code_version = q.text(9);
  r.summary_json = q.text(10);
  return r;
}

// Smallest string greater than every string that starts with `prefix` (byte order),
// or "" when there is none.
std::string prefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

}  // namespace

RunStore::RunStore(std::string path, StoreAccess access)
    : connection_(std::make_unique<StoreConnection>(std::move(path), access)) {}

RunStore::~RunStore() = default;

RunStore::ReadSnapshot::ReadSnapshot(const RunStore& store)
    : transaction_(std::make_unique<SqliteTransaction>(store.connection_->db(), SqliteTransaction::Kind::Read)) {}

RunStore::ReadSnapshot::~ReadSnapshot() = default;

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

StoreAccess RunStore::accessFor(const std::string& path) {
  std::error_code ec;
  if (path.empty() || path == ":memory:" || !fs::exists(path, ec)) return StoreAccess::ReadWrite;
  const fs::path parent = fs::path(path).parent_path();
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(parent.empty() ? "." : parent.c_str(), W_OK) == 0;
  return writable ? StoreAccess::ReadWrite : StoreAccess::ReadOnly;
}

bool RunStore::readOnly() const {
  return connection_->access() == StoreAccess::ReadOnly;
}

const std::string& RunStore::path() const {
  return connection_->db().path();
}

int RunStore::schemaVersion() const {
  return std::stoi(connection_->db().queryText("PRAGMA user_version"));
}

std::string RunStore::integrityCheck() const {
  SqliteStatement st(connection_->db(), "PRAGMA integrity_check");
  std::string out;
  while (st.step()) out += (out.empty() ? "" : "\n") + st.text(0);
  return out;
}

int64_t RunStore::createRun(const std::string& name, const std::string& config_json,
                            const std::string& code_version, const std::string& tags,
                            const std::string& notes) {
  checkJson(config_json, "the config of new run '" + name + "'");
  const runstore::ProcessIdentity owner = runstore::currentProcess();
  auto q = connection_->use(
      "INSERT INTO runs(name, tags, notes, created, status, config_json, code_version, "
      "owner_pid, owner_host, owner_start) VALUES(?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9)");
  q->bindText(1, name).bindText(2, normalizeTags(tags)).bindText(3, notes);
  q->bindText(4, runstore::utcNowIso8601()).bindText(5, config_json).bindText(6, code_version);
  q->bindInt(7, owner.pid).bindText(8, owner.host).bindText(9, owner.start);
  q->run();
  return connection_->db().lastInsertId();
}

void RunStore::finishRun(int64_t id, const std::string& status, const std::string& reason,
                         const std::string& summary_json) {
  if (status != run_status::kFinished && status != run_status::kStopped && status != run_status::kDiverged &&
      status != run_status::kFailed)
    throw StoreError("cannot finish run " + std::to_string(id) + " with status '" + status +
                     "'; use one of: finished, stopped, diverged, failed");
  checkJson(summary_json, "the summary of run " + std::to_string(id));
  auto q = connection_->use(
      "UPDATE runs SET status = ?2, status_reason = ?3, summary_json = ?4, finished = ?5 "
      "WHERE id = ?1");
  q->bindInt(1, id).bindText(2, status).bindText(3, reason).bindText(4, summary_json);
  q->bindText(5, runstore::utcNowIso8601());
  q->run();
  if (connection_->db().changes() == 0) connection_->unknownRun(id);
}

void RunStore::append(int64_t run_id, const std::vector<MetricPoint>& metrics, const std::vector<EventRow>& events,
                      const std::vector<HistogramRow>& histograms, const std::vector<TraceRow>& traces) {
  SqliteTransaction tx(connection_->db());
  connection_->requireRun(run_id);
  if (!metrics.empty()) {
    auto q = connection_->use(
        "INSERT INTO metrics(run_id, step, key, value, wall_s, emulated_s) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    for (const MetricPoint& m : metrics) {
      q->bindInt(1, run_id).bindInt(2, m.step).bindText(3, m.key).bindReal(4, m.value);
      q->bindReal(5, m.wall_s).bindReal(6, m.emulated_s).run();
      q->reset();
    }
  }
  if (!events.empty()) {
    auto q = connection_->use("INSERT INTO events(run_id, step, wall_s, kind, detail_json) VALUES(?1, ?2, ?3, ?4, ?5)");
    for (const EventRow& e : events) {
      q->bindInt(1, run_id).bindInt(2, e.step).bindReal(3, e.wall_s).bindText(4, e.kind);
      q->bindText(5, e.detail_json).run();
      q->reset();
    }
  }
  if (!histograms.empty()) {
    auto q = connection_->use(
        "INSERT INTO histograms(run_id, step, name, lo, hi, counts) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    for (const HistogramRow& h : histograms) {
      q->bindInt(1, run_id).bindInt(2, h.step).bindText(3, h.name).bindReal(4, h.lo);
      q->bindReal(5, h.hi).bindBlob(6, h.counts.data(), h.counts.size() * sizeof(float)).run();
      q->reset();
    }
  }
  if (!traces.empty()) {
    auto q = connection_->use("INSERT INTO step_traces(run_id, step, epoch, trace) VALUES(?1, ?2, ?3, ?4)");
    for (const TraceRow& t : traces) {
      q->bindInt(1, run_id).bindInt(2, t.step).bindInt(3, t.epoch).bindBlob(4, t.trace.data(), t.trace.size()).run();
      q->reset();
    }
  }
  tx.commit();
}

void RunStore::addCheckpoint(int64_t run_id, const CheckpointRow& checkpoint) {
  connection_->requireRun(run_id);
  auto q = connection_->use("INSERT INTO checkpoints(run_id, step, path) VALUES(?1, ?2, ?3)");
  q->bindInt(1, run_id).bindInt(2, checkpoint.step).bindText(3, checkpoint.path).run();
}

void RunStore::rename(int64_t id, const std::string& name) {
  connection_->updateText(id, "UPDATE runs SET name = ?2 WHERE id = ?1", name);
}

void RunStore::setTags(int64_t id, const std::string& tags) {
  connection_->updateText(id, "UPDATE runs SET tags = ?2 WHERE id = ?1", normalizeTags(tags));
}

void RunStore::setNotes(int64_t id, const std::string& notes) {
  connection_->updateText(id, "UPDATE runs SET notes = ?2 WHERE id = ?1", notes);
}

void RunStore::deleteRun(int64_t id) {
  auto q = connection_->use("DELETE FROM runs WHERE id = ?1");  // ON DELETE CASCADE does the rest
  q->bindInt(1, id).run();
  if (connection_->db().changes() == 0) connection_->unknownRun(id);
}

int RunStore::reapOrphans() {
  std::vector<int64_t> orphans;
  {
    auto q = connection_->use("SELECT id, owner_pid, owner_host, owner_start FROM runs WHERE status = 'running'");
    while (q->step()) {
      const runstore::ProcessIdentity owner{q->integer(1), q->text(2), q->text(3)};
      if (!runstore::processAlive(owner)) orphans.push_back(q->integer(0));
    }
  }
  if (orphans.empty()) return 0;  // no write lock taken in the common case
  int marked = 0;
  SqliteTransaction tx(connection_->db());
  auto q = connection_->use(
      "UPDATE runs SET status = 'failed', status_reason = ?2, finished = ?3 "
      "WHERE id = ?1 AND status = 'running'");
  const std::string now = runstore::utcNowIso8601();
  for (int64_t id : orphans) {
    q->bindInt(1, id).bindText(2, kOrphanReason).bindText(3, now).run();
    marked += static_cast<int>(connection_->db().changes());
    q->reset();
  }
  tx.commit();
  return marked;
}

// ---- reads

std::vector<RunInfo> RunStore::listRuns() const {
  auto q = connection_->use(std::string(kRunColumns) + "ORDER BY created DESC, id DESC");
  std::vector<RunInfo> runs;
  while (q->step()) runs.push_back(readRun(*q));
  return runs;
}

std::optional<RunInfo> RunStore::run(int64_t id) const {
  auto q = connection_->use(std::string(kRunColumns) + "WHERE id = ?1");
  q->bindInt(1, id);
  if (!q->step()) return std::nullopt;
  return readRun(*q);
}

std::vector<MetricPoint> RunStore::metrics(int64_t run_id, const std::string& key_prefix) const {
  std::vector<MetricPoint> out;
  forEachMetric(run_id, key_prefix, [&](const MetricPoint& m) { out.push_back(m); });
  return out;
}

void RunStore::forEachMetric(int64_t run_id, const std::string& key_prefix,
                             const std::function<void(const MetricPoint&)>& visit) const {
  connection_->requireRun(run_id);
  auto q = connection_->use(
      "SELECT step, key, value, wall_s, emulated_s FROM metrics "
      "WHERE run_id = ?1 AND key >= ?2 AND (?3 = '' OR key < ?3) ORDER BY step, key, rowid");
  q->bindInt(1, run_id).bindText(2, key_prefix).bindText(3, prefixEnd(key_prefix));
  MetricPoint m;
  while (q->step()) {
    m.step = q->integer(0);
    m.key = q->text(1);
    m.value = q->real(2);
    m.wall_s = q->real(3);
    m.emulated_s = q->real(4);
    visit(m);
  }
}

std::vector<std::string> RunStore::metricKeys(int64_t run_id) const {
  connection_->requireRun(run_id);
  auto q = connection_->use("SELECT DISTINCT key FROM metrics WHERE run_id = ?1 ORDER BY key");
  q->bindInt(1, run_id);
  std::vector<std::string> keys;
  while (q->step()) keys.push_back(q->text(0));
  return keys;
}

std::vector<EventRow> RunStore::events(int64_t run_id) const {
  connection_->requireRun(run_id);
  auto q =
      connection_->use("SELECT step, wall_s, kind, detail_json FROM events WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<EventRow> out;
  while (q->step()) out.push_back(EventRow{q->integer(0), q->real(1), q->text(2), q->text(3)});
  return out;
}

std::vector<HistogramRow> RunStore::histograms(int64_t run_id, const std::string& name_prefix) const {
  connection_->requireRun(run_id);
  auto q = connection_->use(
      "SELECT step, name, lo, hi, counts FROM histograms "
      "WHERE run_id = ?1 AND name >= ?2 AND (?3 = '' OR name < ?3) ORDER BY step, name, rowid");
  q->bindInt(1, run_id).bindText(2, name_prefix).bindText(3, prefixEnd(name_prefix));
  std::vector<HistogramRow> out;
  while (q->step()) {
    HistogramRow h{q->integer(0), q->text(1), q->real(2), q->real(3), {}};
    const void* data = q->blobData(4);
    const std::size_t bytes = q->blobBytes(4);
    if (bytes % sizeof(float) != 0)
      throw StoreError(path() + " holds a damaged histogram '" + h.name + "' (run " + std::to_string(run_id) +
                       ", step " + std::to_string(h.step) +
                       "): its counts are not float32. Delete the run or restore a backup.");
    h.counts.resize(bytes / sizeof(float));
    if (bytes) std::memcpy(h.counts.data(), data, bytes);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<CheckpointRow> RunStore::checkpoints(int64_t run_id) const {
  connection_->requireRun(run_id);
  auto q = connection_->use("SELECT step, path FROM checkpoints WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<CheckpointRow> out;
  while (q->step()) out.push_back(CheckpointRow{q->integer(0), q->text(1)});
  return out;
}

std::vector<TraceRow> RunStore::traces(int64_t run_id) const {
  connection_->requireRun(run_id);
  auto q = connection_->use("SELECT step, epoch, trace FROM step_traces WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<TraceRow> out;
  while (q->step()) {
    const auto* data = static_cast<const uint8_t*>(q->blobData(2));
    out.push_back(TraceRow{q->integer(0), q->integer(1), std::vector<uint8_t>(data, data + q->blobBytes(2))});
  }
  return out;
}

}  // namespace ps
