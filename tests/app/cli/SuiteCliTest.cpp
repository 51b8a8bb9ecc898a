// Claim suites from the CLI, as a user runs them: list, run (and resume), report, bad suites, Ctrl-C.
#include "tests/TestFiles.h"
#include "tests/app/cli/CliRunner.h"

#include "engine/runs/store/RunStore.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace ps::test {
namespace {

namespace fs = std::filesystem;
fs::path suiteDir(const std::string& name) { return freshDir("pipesqueeze-suite-cli", name); }
using nlohmann::json;


// Marks every run of a store as made by another build of the lab.
void madeByOtherCode(const std::string& store) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE runs SET code_version = 'older-code'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

TEST(SuiteCli, ListsTheBundledSuitesWithTheirClaims) {
  auto r = runCli({"suite", "list", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto list = json::parse(r.lastLine());
  ASSERT_GE(list.size(), 10u);
  bool smoke = false;
  for (const auto& s : list) {
    EXPECT_FALSE(s["claim"].get<std::string>().empty());
    EXPECT_FALSE(s["citation"].get<std::string>().empty());
    smoke |= s["name"] == "smoke";
  }
  EXPECT_TRUE(smoke);
  r = runCli({"suite", "list"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find("gradients-milder"), std::string::npos);
}

// --gpu runs a suite's GPU settings (on the CPU here, the device being auto), as runs of their own beside the other
// scales' and a report that says which scale it holds; a suite without GPU settings refuses it, naming the fix.
TEST(SuiteCli, TheGpuScaleRunsAsRunsOfItsOwnAndASuiteWithoutOneSaysSo) {
  const auto dir = suiteDir("gpu");
  const std::string store = (dir / "runs.sqlite").string();
  auto r =
      runCli({"suite", "run", "smoke", "--gpu", "--quick", "--seeds", "1", "--variants", "dense", "--store", store});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("--gpu --quick -o DIR"), std::string::npos) << "the report command keeps the scale:\n" << r.out;
  RunStore s(store);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NE(runs[0].tags.find(",gpu,quick"), std::string::npos) << runs[0].tags;
  // The same variant at the quick CPU scale is another run.
  r = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--variants", "dense", "--store", store, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(json::parse(r.lastLine())["ran"], 1);
  const auto out = dir / "report";
  r = runCli({"suite", "report", "smoke", "--gpu", "--quick", "--seeds", "1", "--store", store, "-o", out.string()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(slurp(out / "report.md").find("GPU scale (--gpu: model.width=256"), std::string::npos);
  r = runCli({"suite", "run", "brown-topk", "--gpu", "--store", store});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("suite brown-topk"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has no GPU scale"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("without --gpu"), std::string::npos) << r.err;
  r = runCli({"suite", "list", "--json"});
  ASSERT_EQ(r.exitCode, 0);
  for (const auto& suite : json::parse(r.lastLine()))
    if (suite["name"] == "topk-k-sweep" || suite["name"] == "brown-topk")
      EXPECT_EQ(suite["gpu"], suite["name"] == "topk-k-sweep") << suite["name"];
}

TEST(SuiteCli, RunResumesAndTheReportHasEveryChart) {
  const auto dir = suiteDir("resume");
  const std::string store = (dir / "runs.sqlite").string();
  auto first = runCli({"suite", "run", "smoke", "--quick", "--store", store, "--json"});
  ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
  auto outcome = json::parse(first.lastLine());
  EXPECT_EQ(outcome["ran"], 6);  // 3 variants x 2 seeds
  EXPECT_EQ(outcome["missing"], 0);
  EXPECT_NE(first.out.find("[6/6] topk1 seed 2 ..."), std::string::npos) << "a progress line per run:\n" << first.out;
  ASSERT_EQ(outcome["verdicts"].size(), 2u);
  // A second sitting finds every run in the store and runs nothing.
  auto second = runCli({"suite", "run", "smoke", "--quick", "--store", store, "--json"});
  ASSERT_EQ(second.exitCode, 0) << second.err;
  outcome = json::parse(second.lastLine());
  EXPECT_EQ(outcome["ran"], 0);
  EXPECT_EQ(outcome["skipped"], 6);
  EXPECT_NE(second.out.find("already in the store"), std::string::npos);
  // The runs are tagged with the suite, the variant and the seed.
  RunStore s(store);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_NE(runs.front().tags.find("suite:smoke"), std::string::npos) << runs.front().tags;
  EXPECT_NE(runs.front().tags.find("variant:topk1"), std::string::npos) << runs.front().tags;

  const auto out = dir / "report";
  auto report = runCli({"suite", "report", "smoke", "--quick", "--store", store, "-o", out.string(), "--json"});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  const auto written = json::parse(report.lastLine());
  const std::string html = slurp(out / "report.html");
  for (const char* f : {"report.html", "report.md"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  if (PIPESQUEEZE_CLI_DRAWS_CHARTS) {
    EXPECT_EQ(written["charts"], json::array({true, true, true}));
    for (const char* f : {"charts/curve.png", "charts/pareto.png", "charts/time-to-target.png"})
      ASSERT_TRUE(fs::exists(out / f)) << f;
    EXPECT_GT(fs::file_size(out / "charts" / "curve.png"), 5000u) << "a real chart, not an empty image";
    EXPECT_NE(html.find("data:image/png;base64,iVBOR"), std::string::npos) << "charts are embedded: one file to share";
  } else {  // a build without the GUI has no chart adapter: the report says so instead of showing empty images
    EXPECT_EQ(written["charts"], json::array({false, false, false}));
    EXPECT_FALSE(fs::exists(out / "charts" / "curve.png"));
    EXPECT_NE(html.find("PIPESQUEEZE_BUILD_GUI=OFF"), std::string::npos);
  }
  EXPECT_NE(html.find("Verdicts"), std::string::npos);
  EXPECT_NE(slurp(out / "report.md").find("quick scale"), std::string::npos);
  // Judged on accuracy, the smoke suite's report says why it maps no break-even; the same suite marked as timed maps
  // its first seed's runs over bandwidths, the fastest in bold, and where TopK stops paying against dense.
  EXPECT_NE(slurp(out / "report.md").find("## Break-even\n\nNot mapped: this suite is judged on accuracy"),
            std::string::npos);
  json timed = json::parse(slurp(fs::path(PIPESQUEEZE_SOURCE_DIR) / "presets/suites/smoke.json"));
  timed["timed"] = true;
  fs::create_directories(dir / "timed");
  std::ofstream(dir / "timed" / "smoke.json") << timed.dump(2);
  const auto mapped = dir / "mapped";
  auto again = runCli(
      {"suite", "report", (dir / "timed" / "smoke.json").string(), "--quick", "--store", store, "-o", mapped.string()});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  const std::string md = slurp(mapped / "report.md");
  EXPECT_NE(md.find("Seed 1's runs re-timed for each bandwidth"), std::string::npos) << md;
  EXPECT_NE(md.find("| Mbit/s | uncompressed | TopK 10% + EF |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 10000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("**"), std::string::npos) << "the fastest per bandwidth in bold";
  EXPECT_NE(md.find("- TopK 10% + EF "), std::string::npos) << md;
  EXPECT_NE(slurp(mapped / "report.html").find("<h2>Break-even</h2>"), std::string::npos);
}

TEST(SuiteCli, RunsOfOtherCodeAreNotTakenForThisCodesResults) {
  const auto dir = suiteDir("version");
  const std::string store = (dir / "runs.sqlite").string();
  auto first = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store, "--json"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  madeByOtherCode(store);
  auto again = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store, "--json"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(json::parse(again.lastLine())["ran"], 3);
  EXPECT_NE(again.out.find("made by code older-code"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("--any-version would reuse it"), std::string::npos);
}

TEST(SuiteCli, AnyVersionReusesRunsOfOtherCode) {
  const auto dir = suiteDir("anyversion");
  const std::string store = (dir / "runs.sqlite").string();
  ASSERT_EQ(runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store}).exitCode, 0);
  madeByOtherCode(store);
  auto r = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store, "--any-version", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(json::parse(r.lastLine())["ran"], 0);
  EXPECT_EQ(json::parse(r.lastLine())["skipped"], 3);
}

// Part of a grid can run on its own (a variant whose method changed, say); the rest waits for a later sitting.
TEST(SuiteCli, VariantsRunsOnlyTheVariantsNamed) {
  const auto dir = suiteDir("variants");
  const std::string store = (dir / "runs.sqlite").string();
  auto r = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store, "--variants", "dense,topk1",
                   "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(json::parse(r.lastLine())["ran"], 2);
  EXPECT_EQ(json::parse(r.lastLine())["missing"], 1) << "the third variant is still to run";
  r = runCli({"suite", "run", "smoke", "--quick", "--seeds", "1", "--store", store, "--variants", "densest"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no variant 'densest'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dense, topk10-ef, topk1"), std::string::npos) << r.err;
}

TEST(SuiteCli, ABadSuiteFileIsRefusedNamingTheFileAndTheField) {
  const auto dir = suiteDir("bad");
  const auto file = dir / "typo.json";
  std::ofstream(file) << R"({"title":"t","claim":"c","citation":"x","scale":"s","base":"smoke",
    "variants":[{"name":"a"}],"rules":[{"text":"t","paper":"p","metric":"eval_acc","lhs":"a","rhs":"a"}]})";
  auto r = runCli({"suite", "run", file.string(), "--store", (dir / "runs.sqlite").string()});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rules[0].metric"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "runs.sqlite")) << "nothing is touched before the suite is valid";
  r = runCli({"suite", "run", "no-such-suite"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("suite list"), std::string::npos) << r.err;
}

TEST(SuiteCli, InterruptStopsTheRunningRunAndStartsNoOther) {
  const auto dir = suiteDir("interrupt");
  const auto file = dir / "long.json";
  std::ofstream(file) << R"({"title":"t","claim":"c","citation":"x","scale":"s","base":"smoke",
    "set":["train.max_steps=1000000"],"variants":[{"name":"a"},{"name":"b"}],
    "rules":[{"text":"t","paper":"p","metric":"eval_accuracy","lhs":"a","rhs":"b"}]})";
  const std::string store = (dir / "runs.sqlite").string();
  CliProcess p({"suite", "run", file.string(), "--store", store});
  for (int i = 0; i < 600; ++i) {  // until the first run has steps
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      RunStore s(store);
      const auto runs = s.listRuns();
      if (!runs.empty() && s.metrics(runs.front().id, "train/loss").size() >= 10) break;
    } catch (const std::exception&) {
    }
  }
  p.signal(SIGINT);
  auto r = p.wait();
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.err.find("run the same command again to continue"), std::string::npos) << r.err;
  RunStore s(store);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u) << "no second run starts after Ctrl-C";
  EXPECT_EQ(runs.front().status, "stopped");
}

}  // namespace
}  // namespace ps::test
