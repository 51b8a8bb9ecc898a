// RunStore: the read side.
#include <cstring>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreImpl.h"

namespace ps {

namespace {

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

std::vector<RunInfo> RunStore::listRuns() const {
  auto q = impl_->use(std::string(kRunColumns) + "ORDER BY created DESC, id DESC");
  std::vector<RunInfo> runs;
  while (q->step()) runs.push_back(readRun(*q));
  return runs;
}

std::optional<RunInfo> RunStore::run(int64_t id) const {
  auto q = impl_->use(std::string(kRunColumns) + "WHERE id = ?1");
  q->bindInt(1, id);
  if (!q->step()) return std::nullopt;
  return readRun(*q);
}

std::vector<MetricPoint> RunStore::metrics(int64_t run_id, const std::string& key_prefix) const {
  impl_->requireRun(run_id);
  auto q = impl_->use(
      "SELECT step, key, value, wall_s, emulated_s FROM metrics "
      "WHERE run_id = ?1 AND key >= ?2 AND (?3 = '' OR key < ?3) ORDER BY step, key, rowid");
  q->bindInt(1, run_id).bindText(2, key_prefix).bindText(3, prefixEnd(key_prefix));
  std::vector<MetricPoint> out;
  while (q->step())
    out.push_back(MetricPoint{q->integer(0), q->text(1), q->real(2), q->real(3), q->real(4)});
  return out;
}

std::vector<std::string> RunStore::metricKeys(int64_t run_id) const {
  impl_->requireRun(run_id);
  auto q = impl_->use("SELECT DISTINCT key FROM metrics WHERE run_id = ?1 ORDER BY key");
  q->bindInt(1, run_id);
  std::vector<std::string> keys;
  while (q->step()) keys.push_back(q->text(0));
  return keys;
}

std::vector<EventRow> RunStore::events(int64_t run_id) const {
  impl_->requireRun(run_id);
  auto q = impl_->use(
      "SELECT step, wall_s, kind, detail_json FROM events WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<EventRow> out;
  while (q->step()) out.push_back(EventRow{q->integer(0), q->real(1), q->text(2), q->text(3)});
  return out;
}

std::vector<HistogramRow> RunStore::histograms(int64_t run_id,
                                               const std::string& name_prefix) const {
  impl_->requireRun(run_id);
  auto q = impl_->use(
      "SELECT step, name, lo, hi, counts FROM histograms "
      "WHERE run_id = ?1 AND name >= ?2 AND (?3 = '' OR name < ?3) ORDER BY step, name, rowid");
  q->bindInt(1, run_id).bindText(2, name_prefix).bindText(3, prefixEnd(name_prefix));
  std::vector<HistogramRow> out;
  while (q->step()) {
    HistogramRow h{q->integer(0), q->text(1), q->real(2), q->real(3), {}};
    const void* data = q->blobData(4);
    const std::size_t bytes = q->blobBytes(4);
    if (bytes % sizeof(float) != 0)
      throw StoreError(path() + " holds a damaged histogram '" + h.name + "' (run " +
                       std::to_string(run_id) + ", step " + std::to_string(h.step) +
                       "): its counts are not float32. Delete the run or restore a backup.");
    h.counts.resize(bytes / sizeof(float));
    if (bytes) std::memcpy(h.counts.data(), data, bytes);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<CheckpointRow> RunStore::checkpoints(int64_t run_id) const {
  impl_->requireRun(run_id);
  auto q = impl_->use(
      "SELECT step, path FROM checkpoints WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<CheckpointRow> out;
  while (q->step()) out.push_back(CheckpointRow{q->integer(0), q->text(1)});
  return out;
}

std::vector<TraceRow> RunStore::traces(int64_t run_id) const {
  impl_->requireRun(run_id);
  auto q = impl_->use("SELECT step, epoch, trace FROM step_traces WHERE run_id = ?1 ORDER BY step, rowid");
  q->bindInt(1, run_id);
  std::vector<TraceRow> out;
  while (q->step()) {
    const auto* data = static_cast<const uint8_t*>(q->blobData(2));
    out.push_back(TraceRow{q->integer(0), q->integer(1), std::vector<uint8_t>(data, data + q->blobBytes(2))});
  }
  return out;
}

}  // namespace ps
