#include "engine/runs/store/RunCsv.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>

#include "engine/runs/store/RunStore.h"

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

void writeRunCsv(const RunStore& store, int64_t run_id, std::ostream& out) {
  const RunStore::ReadSnapshot snapshot(store);
  const std::vector<std::string> keys = store.metricKeys(run_id);  // also checks the run exists
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
  store.forEachMetric(run_id, "", [&](const MetricPoint& m) {
    if (have && m.step != step) flush();
    step = m.step;
    have = true;
    const auto col = column.find(m.key);
    if (col != column.end()) cells[col->second] = m.value;
    keepMax(wall, m.wall_s);
    keepMax(emulated, m.emulated_s);
  });
  if (have) flush();
  if (!out)
    throw StoreError("writing the CSV export of run " + std::to_string(run_id) + " from " + store.path() +
                     " failed; check the destination (disk full? closed pipe?)");
}

}  // namespace ps
