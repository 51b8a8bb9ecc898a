#include "engine/runs/store/RunStore.h"
#include "engine/suites/SuiteReport.h"
#include "engine/suites/SuiteResults.h"
#include "tests/TestFiles.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ps {
namespace {

namespace fs = std::filesystem;
using test::slurp;

fs::path tempDir(const std::string& name) { return test::freshDir("pipesqueeze-suite-test", name); }
using nlohmann::json;


// A finished run of a planned configuration, with an accuracy curve that rises to `accuracy`.
int64_t record(RunStore& store, const PlannedRun& p, double accuracy, const std::string& status = "finished",
               double wire = 0) {
  const int64_t id = store.createRun("r", p.config.dump(), "test-1", p.config["run"]["tags"]);
  std::vector<MetricPoint> m;
  for (int step = 1; step <= 4; ++step) {
    m.push_back({step, "bytes/wire", 1000.0 * (p.variant == "dense" ? 10 : 1), 0.1 * step, 1.0 * step});
    m.push_back({step, "time/codec_s", 0.001, 0.1 * step, 1.0 * step});
    m.push_back({step, "eval/accuracy", accuracy * step / 4, 0.1 * step, 1.0 * step});
  }
  store.append(id, m, {}, {});
  const json summary = {{"eval_accuracy", accuracy},
                        {"eval_accuracy_compressed", accuracy},
                        {"eval_accuracy_uncompressed", accuracy - 0.01},
                        {"bytes_wire", wire > 0 ? wire : p.variant == "dense" ? 4e4 : 4e3},
                        {"emulated_seconds", 4.0}};
  store.finishRun(id, status, "", summary.dump());
  return id;
}

TEST(SuiteReport, PrintsSpreadsWithTwoDigitsAndBytesInAReadableUnit) {
  const auto dir = tempDir("spread");
  RunStore store((dir / "runs.sqlite").string());
  const Suite suite = Suite::load(resolveSuite("smoke"));
  const auto plan = planSuite(suite, 2, SuiteScale{true});
  // TopK 10% with EF ends 3 points above its line in seed 1 and 3 + sqrt(2) in seed 2: a spread of exactly 1 point.
  for (const PlannedRun& p : plan) {
    const double extra = p.variant == "topk10-ef" && p.seed == 2 ? std::sqrt(2.0) / 100 : 0;
    const double wire = p.variant == "dense" ? 12.76e9 + 0.02e9 * (p.seed - 1) : 0;  // 12.76 and 12.78 GB
    record(store, p, (p.variant == "dense" ? 0.95 : p.variant == "topk10-ef" ? 0.93 : 0.80) + extra, "finished", wire);
  }
  const SuiteResults r = collectSuiteResults(store, suite, 2, SuiteScale{true});
  writeSuiteReport(r, suiteCharts(r), {false, false, false}, "x", (dir / "out").string());
  const std::string md = slurp(dir / "out" / "report.md");
  EXPECT_NE(md.find("; margin +3.71 ± 1.0 points (2 seeds)"), std::string::npos) << md;
  // Not "1.28e+04 MB ± 14.1 MB": each number in the unit that suits it, the spread with two digits.
  EXPECT_NE(md.find("| 12.8 GB ± 14 MB |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4.00 kB ± 0.0 kB |"), std::string::npos) << md;
}

TEST(SuiteReport, CollectsTheStoresRunsByConfigurationAndWritesBothDocuments) {
  const auto dir = tempDir("report");
  RunStore store((dir / "runs.sqlite").string());
  const Suite suite = Suite::load(resolveSuite("smoke"));
  const auto plan = planSuite(suite, 3, SuiteScale{true});
  ASSERT_EQ(plan.size(), 9u);  // 3 variants x 3 seeds
  std::map<std::string, double> accuracy = {{"dense", 0.95}, {"topk10-ef", 0.93}, {"topk1", 0.80}};
  for (size_t i = 0; i + 1 < plan.size(); ++i) record(store, plan[i], accuracy[plan[i].variant] + 0.001 * plan[i].seed);
  record(store, plan.back(), 0.5, "failed");   // not a result: the last planned run is still missing
  record(store, plan.back(), 0.5, "stopped");  // neither
  const SuiteResults r = collectSuiteResults(store, suite, 3, SuiteScale{true});
  EXPECT_EQ(r.missing(), 1);
  EXPECT_EQ(r.runs.at("dense").size(), 3u);
  EXPECT_EQ(r.runs.at("topk1").size(), 2u);
  EXPECT_EQ(collectSuiteResults(store, suite, 3, SuiteScale{}).missing(), 9) << "full-scale runs are other runs";
  const auto verdicts = r.verdicts();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].kind, VerdictKind::Holds) << verdicts[0].why;  // 0.93 >= 0.95 - 0.05 in every seed
  EXPECT_EQ(verdicts[1].kind, VerdictKind::Holds) << verdicts[1].why;  // 4 kB <= 0.5 x 40 kB
  EXPECT_EQ(verdicts[0].holmP, 0.0) << "no spread: p = 0, and so is its Holm adjustment";
  // With two of the three seeds the same margins are no verdict: a t-test decides from three.
  EXPECT_EQ(collectSuiteResults(store, suite, 2, SuiteScale{true}).verdicts()[0].kind, VerdictKind::Inconclusive);

  // A diverged run is a result, and its quality figures are the worst there are (not the last evaluation before
  // the loss blew up).
  RunStore other((dir / "diverged.sqlite").string());
  record(other, plan[2], 0.7, "diverged");
  const SuiteResults d = collectSuiteResults(other, suite, 1, SuiteScale{true});
  EXPECT_EQ(d.value("topk1", 1, "eval_accuracy"), 0.0);
  EXPECT_TRUE(std::isinf(*d.value("topk1", 1, "eval_loss")));
  EXPECT_EQ(d.value("topk1", 1, "bytes_wire"), 4e3);

  const auto charts = suiteCharts(r);
  ASSERT_EQ(charts.size(), 3u);
  EXPECT_EQ(charts[0].series.size(), 3u);
  EXPECT_EQ(charts[0].series[0].points.size(), 4u) << "one point per evaluation, averaged over seeds";
  EXPECT_NEAR(charts[0].series[0].points.back().second, 100 * (0.95 + 0.002), 1e-9);
  EXPECT_EQ(charts[1].kind, ReportChart::Kind::Scatter);
  EXPECT_EQ(charts[1].series[2].points.size(), 2u) << "topk1 has two finished runs";
  EXPECT_EQ(charts[2].kind, ReportChart::Kind::Bars);
  EXPECT_EQ(charts[2].categories.size(), 3u);

  // A chart that was drawn is embedded; one that was not says why.
  fs::create_directories(dir / "out" / "charts");
  std::ofstream(dir / "out" / "charts" / charts[0].file) << "\x89PNG fake";
  const std::string html = writeSuiteReport(r, charts, {true, false, false}, "no Qt here", (dir / "out").string());
  EXPECT_EQ(fs::path(html), dir / "out" / "report.html");
  const std::string page = slurp(html), md = slurp(dir / "out" / "report.md");
  EXPECT_NE(page.find("data:image/png;base64,iVBORyBmYWtl"), std::string::npos);
  EXPECT_NE(page.find("Not drawn: no Qt here"), std::string::npos);
  EXPECT_NE(page.find("class=\"holds\""), std::string::npos);
  EXPECT_NE(page.find("id=\"run-1\""), std::string::npos);
  EXPECT_NE(page.find(suite.claim.substr(0, 40)), std::string::npos);
  EXPECT_NE(md.find("| TopK 10% with EF stays within 5 points of uncompressed |"), std::string::npos) << md;
  EXPECT_NE(md.find("**holds**"), std::string::npos);
  // The margin keeps its three significant digits when they end in zeros (0.93 against 0.95 - 0.05).
  EXPECT_NE(md.find("; margin +3.00 ± "), std::string::npos) << md;
  EXPECT_NE(md.find("quick scale"), std::string::npos) << "the report says at which scale it was measured";
  EXPECT_NE(md.find("1 of 9 planned runs are missing"), std::string::npos);
  // Every rule shows the interval of its mean margin and its p beside the Holm-adjusted one.
  EXPECT_NE(md.find("| 95% CI of the margin | p / Holm p |"), std::string::npos) << md;
  EXPECT_NE(md.find("| [+3.00, +3.00] points | < 0.001 / < 0.001 |"), std::string::npos) << md;
  EXPECT_NE(md.find("paired one-sample t-test"), std::string::npos) << md;
  EXPECT_NE(md.find("![" + charts[0].title + "](charts/curve.png)"), std::string::npos);
  EXPECT_NE(md.find("(not drawn: no Qt here)"), std::string::npos);
  EXPECT_EQ(md.find("Warning:"), std::string::npos) << "one code version: nothing to warn about";
  // Runs of two code versions are flagged.
  RunStore mixed((dir / "mixed.sqlite").string());
  record(mixed, plan[0], 0.9);
  const int64_t id = mixed.createRun("r", plan[1].config.dump(), "test-2", "");
  mixed.finishRun(id, "finished", "", R"({"eval_accuracy":0.9})");
  writeSuiteReport(collectSuiteResults(mixed, suite, 1, SuiteScale{true}), charts, {false, false, false}, "x",
                   (dir / "m").string());
  EXPECT_NE(slurp(dir / "m" / "report.md").find("more than one version of the code"), std::string::npos);
}

}  // namespace
}  // namespace ps
