#include "engine/suites/ReportBreakeven.h"

#include "engine/suites/ReportText.h"

namespace ps::report {

BreakevenSection breakevenSection(const SuiteResults& r, const std::map<int64_t, std::string>& labels) {
  BreakevenSection b;
  if (!r.suite.timed) {
    b.note =
        "Not mapped: this suite is judged on accuracy, and its runs may have been timed with other work beside "
        "them, so a map of their times over bandwidths would mislead. Timed suites (\"timed\": true) are mapped.";
    return b;
  }
  if (!r.breakeven) {
    b.note = "Not mapped: " + r.breakeven_why + ".";
    return b;
  }
  const BreakevenMap& m = *r.breakeven;
  const auto nameOf = [&](int64_t id) {
    const auto it = labels.find(id);
    return it != labels.end() ? it->second : "run " + std::to_string(id);
  };
  b.note = "Seed " + std::to_string(r.seeds.front()) + "'s runs re-timed for each bandwidth from their step traces " +
           "(each step's own latency), to " + m.metric + " " + format("%.4g", m.target) +
           "; the fastest variant per bandwidth in bold. Timed suites run one run at a time on a quiet machine.";
  b.header.push_back("Mbit/s");
  for (const auto& run : m.runs) {
    const std::string name = nameOf(run.id);
    b.header.push_back(name + (run.dense && name.find("uncompressed") == std::string::npos ? " (uncompressed)" : ""));
  }
  std::map<int64_t, bool> reaches;
  for (const auto& run : m.runs) reaches[run.id] = !run.seconds.empty() && run.seconds.front().has_value();
  for (size_t i = 0; i < m.bandwidths.size(); ++i) {
    std::vector<std::string> row{format("%g", m.bandwidths[i])};
    for (size_t k = 0; k < m.runs.size(); ++k) {
      const auto& t = m.runs[k].seconds[i];
      const std::string cell = t ? format(*t < 100 ? "%.2f s" : "%.0f s", *t) : "not reached";
      row.push_back(int(k) == m.winner[i] ? "**" + cell + "**" : cell);
    }
    b.rows.push_back(std::move(row));
  }
  for (const auto& p : m.pairs)
    b.lines.push_back(reaches[p.method] ? describePair(p, m.bandwidths, nameOf)
                                        : nameOf(p.method) + " never reaches the target");
  if (m.pairs.empty()) b.lines.push_back("No variant is uncompressed, so there is no break-even bandwidth to find.");
  return b;
}

}  // namespace ps::report
