#include "engine/suites/SuiteReport.h"
#include "engine/core/AtomicFile.h"
#include "engine/core/RunSummary.h"

#include "engine/suites/ReportBreakeven.h"
#include "engine/suites/ReportText.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ps {
namespace {

namespace fs = std::filesystem;
using namespace report;

std::string rhsText(const SuiteRule& r) {
  std::string t = r.rhs.describe();
  if (r.scale != 1) t = format("%g", r.scale) + " × " + t;
  if (r.offset != 0) {
    const SuiteMetricInfo& m = infoOf(r.metric);
    t += r.offset > 0 ? " + " : " − ";
    t += m.percent ? format("%g points", 100 * std::abs(r.offset)) : format("%g", std::abs(r.offset));
  }
  return t;
}

std::string measuredText(const SuiteRule& r, const Verdict& v) {
  if (v.margin.count == 0) return "no complete seed yet";
  const SuiteMetricInfo& ml = infoOf(r.lhs.metric.empty() ? r.metric : r.lhs.metric);
  const SuiteMetricInfo& mr = infoOf(r.rhs.metric.empty() ? r.metric : r.rhs.metric);
  // A side capped at its run's end in some seed: its mean is a lower bound.
  const auto bound = [](bool censored) { return censored ? std::string("> ") : std::string(); };
  return r.lhs.describe() + " " + bound(v.lhsCensored) + statText(ml, v.lhs) + " " + r.op + " " + rhsText(r) + " " +
         bound(v.rhsCensored) + statText(mr, v.rhs) + "; margin " + marginText(infoOf(r.metric), v.margin) + " (" +
         std::to_string(v.margin.count) + (v.margin.count == 1 ? " seed)" : " seeds)");
}

std::string claimText(const SuiteRule& r, const Verdict& v) { return r.text + (v.oracle ? " †" : ""); }

std::string intervalOf(const SuiteRule& r, const Verdict& v) {
  return intervalText(infoOf(r.metric), v.ciLow, v.ciHigh);
}

std::string pOf(const Verdict& v) {
  if (std::isnan(v.p)) return "–";
  return pValueText(v.p) + (v.test == VerdictTest::Sign ? " (sign)" : "") + " / " + pValueText(v.holmP);
}

const char* kHowJudged =
    "Margins are paired by seed. A rule holds or fails only when a paired one-sample t-test on the per-seed margins "
    "rejects zero at 95% two-sided (|mean| > t(0.975, n−1) · sd / √n, with three seeds or more); the interval is the "
    "95% confidence interval of the mean margin, and p is the test's, beside the Holm-adjusted p across this suite's "
    "rules. Where one side never reached the target in a seed, its time is capped at its run's end (shown as > T) and "
    "an exact sign test decides, which needs six or more seeds that agree. Inconclusive rules say how many seeds would "
    "decide them at the spread observed. † compares against the best of several variants picked per seed after the "
    "fact: an oracle nobody could choose in advance, which favours that side.";

const char* kMixedVersions =
    "these runs were made by more than one version of the code, so a verdict may compare results of different code; "
    "run the suite again with one build to judge like with like";

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = uint8_t(bytes[i]), b1 = i + 1 < bytes.size() ? uint8_t(bytes[i + 1]) : 0,
                   b2 = i + 2 < bytes.size() ? uint8_t(bytes[i + 2]) : 0;
    const uint32_t n = b0 << 16 | b1 << 8 | b2;
    out += table[n >> 18 & 63];
    out += table[n >> 12 & 63];
    out += i + 1 < bytes.size() ? table[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? table[n & 63] : '=';
  }
  return out;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything the two documents share, computed once.
struct Facts {
  std::string scale, date, versions, missing;
  struct VariantRow {
    std::string name, label, final, wire, emulated, target, codec;
    std::vector<int64_t> runs;
    std::vector<std::string> statuses;
  };
  std::vector<VariantRow> variants;
  std::vector<RunFigures> runs;
};

Facts factsOf(const SuiteResults& r) {
  Facts f;
  const Suite& s = r.suite;
  const auto& first = r.plan.front().config;
  const auto& train = first.at("train");
  const std::string length = train.at("epochs").get<int64_t>() > 0
                                 ? std::to_string(train.at("epochs").get<int64_t>()) + " epochs"
                                 : std::to_string(train.at("max_steps").get<int64_t>()) + " steps";
  const auto listed = [](const std::vector<std::string>& sets) {
    std::string q;
    for (const auto& x : sets) q += (q.empty() ? "" : ", ") + x;
    return q;
  };
  const std::string gpu = r.scale.gpu ? "GPU scale (--gpu: " + listed(s.gpu) + ")" : "";
  if (r.scale.quick)
    f.scale = (gpu.empty() ? "" : gpu + " at ") + "quick scale (--quick: " + listed(s.quick) + "), " + length +
              " per run — a first look, not the scale of the claim (" + s.scale + ")";
  else if (r.scale.gpu)
    f.scale = gpu + ", " + length + " per run; the claim was written for " + s.scale;
  else
    f.scale = s.scale + " (" + length + " per run)";
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  f.date = date;
  std::set<std::string> versions;
  const std::string curveMetric = summaryMetricOf(s.curve);
  const SuiteMetricInfo& cm = infoOf(curveMetric);
  for (const auto& v : s.variants) {
    Facts::VariantRow row;
    row.name = v.name;
    row.label = v.label;
    std::vector<double> final, wire, emulated, target, codec;
    for (uint64_t seed : r.seeds) {
      const auto value = [&](const std::string& m) { return r.value(v.name, seed, m); };
      const auto vr = r.runs.find(v.name);
      if (vr == r.runs.end() || !vr->second.count(seed)) continue;
      const RunFigures& run = vr->second.at(seed);
      row.runs.push_back(run.run_id);
      row.statuses.push_back(run.status);
      versions.insert(run.code_version);
      f.runs.push_back(run);
      if (auto x = value(curveMetric)) final.push_back(*x);
      if (auto x = value(summary_key::kBytesWire)) wire.push_back(*x);
      if (auto x = value(summary_key::kEmulatedSeconds)) emulated.push_back(*x);
      if (auto x = value("time_to_target")) target.push_back(*x);
      if (auto x = value("codec_ms_per_step")) codec.push_back(*x);
    }
    row.final = statText(cm, statisticOf(final));
    row.wire = statText(infoOf(summary_key::kBytesWire), statisticOf(wire));
    row.emulated = statText(infoOf(summary_key::kEmulatedSeconds), statisticOf(emulated));
    row.target = statText(infoOf("time_to_target"), statisticOf(target));
    row.codec = statText(infoOf("codec_ms_per_step"), statisticOf(codec));
    f.variants.push_back(std::move(row));
  }
  for (const auto& v : versions) f.versions += (f.versions.empty() ? "" : ", ") + v;
  if (const int missing = r.missing())
    f.missing = std::to_string(missing) + " of " + std::to_string(r.plan.size()) +
                " planned runs are missing; `pipesqueeze-cli suite run " + s.name + " --seeds " +
                std::to_string(r.seeds.size()) + r.scale.flags() + "` completes them.";
  return f;
}

// Each run named by its variant's label.
std::map<int64_t, std::string> labelsOf(const Facts& f) {
  std::map<int64_t, std::string> labels;
  for (const auto& v : f.variants)
    for (int64_t id : v.runs) labels[id] = v.label;
  return labels;
}

std::string targetText(const SuiteResults& r) {
  const SuiteTarget& t = r.suite.target;
  const SuiteMetricInfo& m = infoOf(t.metric);
  return (m.higherIsBetter ? format("%g%% of ", 100 * t.fraction) : format("1/%g of ", t.fraction)) +
         r.suite.targetOf() + "'s final " + curveLabel(evalKeyOf(t.metric)) + " in the same seed";
}

void writeMarkdown(const SuiteResults& r, const std::vector<Verdict>& verdicts, const Facts& f,
                   const std::vector<ReportChart>& charts, const std::vector<bool>& drawn, const std::string& why,
                   const fs::path& file) {
  const Suite& s = r.suite;
  AtomicFile atomic(file.string());  // replaced whole; never through a link to a file
  std::ostream& out = atomic.stream();
  out << "# " << s.title << "\n\n> " << s.claim << "\n>\n> — " << s.citation << "\n\n";
  out << "- **Measured at:** " << f.scale << "\n- **Seeds:** " << r.seeds.size() << "\n- **Suite:** `" << s.name
      << "` (" << s.path << ")\n- **Code:** " << (f.versions.empty() ? "n/a" : f.versions) << "\n- **Written:** "
      << f.date << "\n";
  if (!f.missing.empty()) out << "- **Incomplete:** " << f.missing << "\n";
  if (f.versions.find(", ") != std::string::npos) out << "- **Warning:** " << kMixedVersions << "\n";
  out << "\n## Verdicts\n\n| claim tested | the paper | measured (mean ± std over seeds) | 95% CI of the margin | "
         "p / Holm p | verdict | runs |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < s.rules.size(); ++i) {
    const auto& v = verdicts[i];
    std::string runs;
    for (int64_t id : std::set<int64_t>(v.runs.begin(), v.runs.end()))
      runs += (runs.empty() ? "" : ", ") + std::to_string(id);
    out << "| " << cell(claimText(s.rules[i], v)) << " | " << cell(s.rules[i].paper) << " | "
        << cell(measuredText(s.rules[i], v)) << " | " << intervalOf(s.rules[i], v) << " | " << pOf(v) << " | **"
        << verdictName(v.kind) << "**: " << cell(v.why) << " | " << runs << " |\n";
  }
  if (!s.notes.empty()) out << "\n" << s.notes << "\n";
  out << "\n" << kHowJudged << "\n";
  out << "\n## Variants\n\nTarget for the time to target: " << targetText(r) << ".\n\n"
      << "| variant | final " << curveLabel(s.curve)
      << " | wire bytes | emulated time | time to target | codec time / step | runs |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const auto& v : f.variants) {
    std::string runs;
    for (size_t i = 0; i < v.runs.size(); ++i)
      runs += (i ? ", " : "") + std::to_string(v.runs[i]) +
              (v.statuses[i] == run_status::kFinished ? "" : " (" + v.statuses[i] + ")");
    out << "| " << cell(v.label) << " | " << v.final << " | " << v.wire << " | " << v.emulated << " | " << v.target << " | "
        << v.codec << " | " << (runs.empty() ? "not run" : runs) << " |\n";
  }
  const BreakevenSection map = breakevenSection(r, labelsOf(f));
  out << "\n## Break-even\n\n" << map.note << "\n";
  if (!map.rows.empty()) {
    out << "\n|";
    for (const auto& h : map.header) out << " " << cell(h) << " |";
    out << "\n|";
    for (size_t i = 0; i < map.header.size(); ++i) out << "---|";
    out << "\n";
    for (const auto& row : map.rows) {
      out << "|";
      for (const auto& c : row) out << " " << c << " |";
      out << "\n";
    }
  }
  if (!map.lines.empty()) out << "\n";
  for (const auto& l : map.lines) out << "- " << l << "\n";
  out << "\n## Charts\n\n";
  for (size_t i = 0; i < charts.size(); ++i) {
    out << "### " << charts[i].title << "\n\n";
    if (drawn[i])
      out << "![" << charts[i].title << "](charts/" << charts[i].file << ")\n\n";
    else
      out << "(not drawn: " << why << ")\n\n";
    if (!charts[i].note.empty()) out << charts[i].note << "\n\n";
  }
  out << "## Runs\n\n";
  for (const auto& run : f.runs)
    out << "- run " << run.run_id << ": " << run.name << ", " << run.status << ", code " << run.code_version
        << " (`pipesqueeze-cli runs show " << run.run_id << "`)\n";
  atomic.commit();
}

void writeHtml(const SuiteResults& r, const std::vector<Verdict>& verdicts, const Facts& f,
               const std::vector<ReportChart>& charts, const std::vector<bool>& drawn, const std::string& why,
               const fs::path& dir, const fs::path& file) {
  const Suite& s = r.suite;
  AtomicFile atomic(file.string());  // replaced whole; never through a link to a file
  std::ostream& out = atomic.stream();
  auto runLinks = [](const std::vector<int64_t>& ids) {
    std::string t;
    for (int64_t id : std::set<int64_t>(ids.begin(), ids.end()))
      t += (t.empty() ? "" : ", ") + std::string("<a href=\"#run-") + std::to_string(id) + "\">" + std::to_string(id) +
           "</a>";
    return t;
  };
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html(s.title)
      << "</title>\n<style>body{font:15px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
         "color:#222}blockquote{border-left:4px solid #999;margin:1em 0;padding:.2em 1em;color:#444}"
         "table{border-collapse:collapse;width:100%;margin:1em 0}th,td{border:1px solid #ccc;padding:.35em .5em;"
         "vertical-align:top;text-align:left}th{background:#f3f3f3}.holds{color:#1a7f37;font-weight:bold}"
         ".fails{color:#cf222e;font-weight:bold}.inconclusive{color:#9a6700;font-weight:bold}img{max-width:100%;"
         "border:1px solid #ddd}.why{color:#555;font-size:90%}code{background:#f3f3f3;padding:0 .2em}</style>"
         "</head><body>\n";
  out << "<h1>" << html(s.title) << "</h1>\n<blockquote>" << html(s.claim) << "<br>— " << html(s.citation)
      << "</blockquote>\n<ul><li><b>Measured at:</b> " << html(f.scale) << "</li><li><b>Seeds:</b> " << r.seeds.size()
      << "</li><li><b>Suite:</b> <code>" << html(s.name) << "</code></li><li><b>Code:</b> "
      << html(f.versions.empty() ? "n/a" : f.versions) << "</li><li><b>Written:</b> " << f.date << "</li>";
  if (!f.missing.empty()) out << "<li><b>Incomplete:</b> " << html(f.missing) << "</li>";
  if (f.versions.find(", ") != std::string::npos) out << "<li><b>Warning:</b> " << html(kMixedVersions) << "</li>";
  out << "</ul>\n<h2>Verdicts</h2>\n<table><tr><th>claim tested</th><th>the paper</th><th>measured (mean ± std over "
         "seeds)</th><th>95% CI of the margin</th><th>p / Holm p</th><th>verdict</th><th>runs</th></tr>\n";
  for (size_t i = 0; i < s.rules.size(); ++i) {
    const auto& v = verdicts[i];
    out << "<tr><td>" << html(claimText(s.rules[i], v)) << "</td><td>" << html(s.rules[i].paper) << "</td><td>"
        << html(measuredText(s.rules[i], v)) << "</td><td>" << html(intervalOf(s.rules[i], v)) << "</td><td>"
        << html(pOf(v)) << "</td><td><span class=\"" << verdictName(v.kind) << "\">"
        << verdictName(v.kind) << "</span><div class=\"why\">" << html(v.why) << "</div></td><td>" << runLinks(v.runs)
        << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!s.notes.empty()) out << "<p>" << html(s.notes) << "</p>\n";
  out << "<p class=\"why\">" << html(kHowJudged) << "</p>\n";
  out << "<h2>Variants</h2>\n<p>Target for the time to target: " << html(targetText(r)) << ".</p>\n<table><tr>"
      << "<th>variant</th><th>final " << html(curveLabel(s.curve)) << "</th><th>wire bytes</th><th>emulated time</th>"
      << "<th>time to target</th><th>codec time / step</th><th>runs</th></tr>\n";
  for (const auto& v : f.variants)
    out << "<tr><td>" << html(v.label) << "</td><td>" << html(v.final) << "</td><td>" << html(v.wire) << "</td><td>"
        << html(v.emulated) << "</td><td>" << html(v.target) << "</td><td>" << html(v.codec) << "</td><td>"
        << (v.runs.empty() ? "not run" : runLinks(v.runs)) << "</td></tr>\n";
  out << "</table>\n";
  const BreakevenSection map = breakevenSection(r, labelsOf(f));
  out << "<h2>Break-even</h2>\n<p class=\"why\">" << html(map.note) << "</p>\n";
  if (!map.rows.empty()) {
    out << "<table><tr>";
    for (const auto& h : map.header) out << "<th>" << html(h) << "</th>";
    out << "</tr>\n";
    for (const auto& row : map.rows) {
      out << "<tr>";
      for (const auto& c : row) {
        const bool bold = c.size() > 4 && c.rfind("**", 0) == 0;
        out << "<td>" << (bold ? "<b>" + html(c.substr(2, c.size() - 4)) + "</b>" : html(c)) << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  if (!map.lines.empty()) {
    out << "<ul>";
    for (const auto& l : map.lines) out << "<li>" << html(l) << "</li>";
    out << "</ul>\n";
  }
  out << "<h2>Charts</h2>\n";
  for (size_t i = 0; i < charts.size(); ++i) {
    out << "<h3>" << html(charts[i].title) << "</h3>\n";
    if (drawn[i])
      out << "<img alt=\"" << html(charts[i].title) << "\" src=\"data:image/png;base64,"
          << base64(readFile(dir / "charts" / charts[i].file)) << "\">\n";
    else
      out << "<p class=\"why\">Not drawn: " << html(why) << "</p>\n";
    if (!charts[i].note.empty()) out << "<p class=\"why\">" << html(charts[i].note) << "</p>\n";
  }
  out << "<h2>Runs</h2>\n<ul>\n";
  for (const auto& run : f.runs)
    out << "<li id=\"run-" << run.run_id << "\">run " << run.run_id << ": " << html(run.name) << ", "
        << html(run.status) << ", code " << html(run.code_version) << " (<code>pipesqueeze-cli runs show " << run.run_id
        << "</code>)</li>\n";
  out << "</ul>\n</body></html>\n";
  atomic.commit();
}

}  // namespace

std::vector<ReportChart> suiteCharts(const SuiteResults& r) {
  const Suite& s = r.suite;
  const SuiteMetricInfo& cm = infoOf(summaryMetricOf(s.curve));
  const double yScale = cm.percent ? 100 : 1;
  const std::string yLabel = curveLabel(s.curve);
  ReportChart curve{"curve.png", yLabel + " over training steps, mean over seeds", "step", yLabel};
  ReportChart pareto{"pareto.png", "Final " + yLabel + " against wire bytes, one point per run", "wire bytes (MB)",
                     yLabel, ReportChart::Kind::Scatter};
  ReportChart bars{"time-to-target.png", "Emulated time to the target (mean over seeds)", "", "emulated seconds",
                   ReportChart::Kind::Bars};
  std::string unreached;
  for (size_t i = 0; i < s.variants.size(); ++i) {
    const auto& v = s.variants[i];
    const auto it = r.runs.find(v.name);
    if (it == r.runs.end()) continue;
    std::map<int64_t, std::pair<double, int>> sums;  // step -> (sum, count)
    ReportSeries points{v.label, int(i), {}};
    std::vector<double> times;
    for (const auto& [seed, run] : it->second) {
      const auto c = run.curves.find(s.curve);
      if (c != run.curves.end() && !c->second.empty()) {
        for (const auto& p : c->second) sums[p.step].first += p.value, sums[p.step].second += 1;
        points.points.emplace_back(
            run.values.count(summary_key::kBytesWire) ? run.values.at(summary_key::kBytesWire) / 1e6 : 0.0,
            yScale * c->second.back().value);
      }
      if (auto t = r.value(v.name, seed, "time_to_target"); t && std::isfinite(*t)) times.push_back(*t);
    }
    ReportSeries line{v.label, int(i), {}};
    for (const auto& [step, sc] : sums) line.points.emplace_back(double(step), yScale * sc.first / sc.second);
    curve.series.push_back(std::move(line));
    pareto.series.push_back(std::move(points));
    const double x = double(bars.categories.size());
    bars.categories.push_back(times.empty() ? v.name + " (never)" : v.name);
    if (!times.empty())
      bars.series.push_back({v.label, int(i), {{x, statisticOf(times).mean}}});
    else
      unreached += (unreached.empty() ? "" : ", ") + v.name;
  }
  bars.title = "Emulated time to the target, mean over the seeds that reached it";
  bars.note = "Target: " + targetText(r) + ".";
  if (!unreached.empty()) bars.note += " No bar: never reached the target (" + unreached + ").";
  return {curve, pareto, bars};
}

std::string writeSuiteReport(const SuiteResults& r, const std::vector<ReportChart>& charts,
                             const std::vector<bool>& drawn, const std::string& whyNotDrawn, const std::string& dir) {
  const fs::path root(dir);
  fs::create_directories(root / "charts");
  const auto verdicts = r.verdicts();
  const Facts f = factsOf(r);
  writeMarkdown(r, verdicts, f, charts, drawn, whyNotDrawn, root / "report.md");
  writeHtml(r, verdicts, f, charts, drawn, whyNotDrawn, root, root / "report.html");
  return (root / "report.html").string();
}

}  // namespace ps
