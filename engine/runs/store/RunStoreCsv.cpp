// RunStore::exportCsv: metrics of one run as a wide CSV table.
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreImpl.h"

namespace ps {

namespace {

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes.
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Shortest text that reads back to the same double; "nan", "inf", "-inf" otherwise.
std::string number(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// Largest of the non-NaN values seen so far.
void keepMax(double& acc, double v) {
  if (!std::isnan(v) && (std::isnan(acc) || v > acc)) acc = v;
}

}  // namespace

void RunStore::exportCsv(int64_t run_id, std::ostream& out) const {
  // One snapshot for the header and the rows, even while the run keeps writing.
  SqliteTransaction snapshot(impl_->db, SqliteTransaction::Kind::Read);
  const std::vector<std::string> keys = metricKeys(run_id);  // also checks the run exists
  std::map<std::string, std::size_t> column;
  out << "step,wall_s,emulated_s";
  for (const std::string& k : keys) {
    column.emplace(k, column.size());
    out << ',' << csvField(k);
  }
  out << '\n';

  const double nan = std::nan("");
  int64_t step = 0;
  bool have = false;
  double wall = nan, emulated = nan;
  std::vector<std::optional<double>> cells(keys.size());
  auto flush = [&] {
    out << step << ',' << number(wall) << ',' << number(emulated);
    for (auto& c : cells) {
      out << ',';
      if (c) out << number(*c);
      c.reset();
    }
    out << '\n';
    wall = emulated = nan;
  };

  auto q = impl_->use(
      "SELECT step, key, value, wall_s, emulated_s FROM metrics WHERE run_id = ?1 "
      "ORDER BY step, rowid");
  q->bindInt(1, run_id);
  while (q->step()) {
    const int64_t s = q->integer(0);
    if (have && s != step) flush();
    step = s;
    have = true;
    const auto col = column.find(q->text(1));
    if (col != column.end()) cells[col->second] = q->real(2);
    keepMax(wall, q->real(3));
    keepMax(emulated, q->real(4));
  }
  if (have) flush();
  if (!out)
    throw StoreError("writing the CSV export of run " + std::to_string(run_id) + " from " +
                     path() + " failed; check the destination (disk full? closed pipe?)");
}

}  // namespace ps
