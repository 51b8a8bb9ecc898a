#include "app/cli/SuiteCommand.h"
#include "engine/core/RunSummary.h"

#include "app/cli/ProgressPrinter.h"
#include "app/cli/StopOnSignal.h"
#include "engine/errors/ConfigError.h"
#include "engine/session/SuiteRunner.h"
#include "engine/suites/SuiteReport.h"
#include "engine/suites/SuiteResults.h"
#ifdef PIPESQUEEZE_HAVE_CHARTS
#include "app/report/OffscreenCharts.h"
#endif

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdio>
#include <iostream>

namespace ps::cli {
namespace {

using nlohmann::json;

std::atomic<SuiteRunner*> activeRunner{nullptr};
void cancelActiveRunner() {
  if (SuiteRunner* r = activeRunner.load()) r->cancel();
}

std::string duration(double s) {
  char text[32];
  if (s < 120)
    std::snprintf(text, sizeof text, "%.0f s", s);
  else
    std::snprintf(text, sizeof text, "%dm%02ds", int(s) / 60, int(s) % 60);
  return text;
}

std::string headline(const json& summary) {
  char text[64] = "";
  const RunSummary s = RunSummary::fromJson(summary);
  if (s.classifier && s.eval.accuracy)
    std::snprintf(text, sizeof text, "accuracy %.2f%%", 100 * *s.eval.accuracy);
  else if (!s.classifier && s.eval.perplexity)
    std::snprintf(text, sizeof text, "perplexity %.3g", *s.eval.perplexity);
  return text;
}

// A figure for JSON, which has no infinity: a target never reached is the string "inf" (or "-inf").
json figure(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json verdictsJson(const SuiteResults& r) {
  json out = json::array();
  const auto verdicts = r.verdicts();
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const auto& v = verdicts[i];
    const bool any = v.margin.count > 0;
    out.push_back({{"rule", r.suite.rules[i].text},
                   {"verdict", verdictName(v.kind)},
                   {"why", v.why},
                   {"seeds", v.margin.count},
                   {"lhs_mean", any ? figure(v.lhs.mean) : nullptr},
                   {"rhs_mean", any ? figure(v.rhs.mean) : nullptr},
                   {"margin_mean", any ? figure(v.margin.mean) : nullptr},
                   {"margin_sd", any ? figure(v.margin.sd) : nullptr},
                   {"test", v.test == VerdictTest::PairedT ? "paired-t"
                            : v.test == VerdictTest::Sign  ? "sign"
                                                           : "none"},
                   {"p", figure(v.p)},
                   {"holm_p", figure(v.holmP)},
                   {"margin_ci95", {figure(v.ciLow), figure(v.ciHigh)}},
                   {"censored_seeds", v.censored},
                   {"seeds_to_decide", v.seedsToDecide ? json(v.seedsToDecide) : json(nullptr)},
                   {"oracle", v.oracle},
                   {"runs", v.runs}});
  }
  return out;
}

void printVerdicts(const SuiteResults& r) {
  const auto verdicts = r.verdicts();
  for (size_t i = 0; i < verdicts.size(); ++i)
    std::cout << "  " << verdictName(verdicts[i].kind) << ": " << r.suite.rules[i].text << " (" << verdicts[i].why
              << ")\n";
}

// The report with its charts drawn by the app's chart adapter where the build has it; without Qt, without charts.
std::string writeReportFiles(const SuiteResults& results, const std::string& dir, std::vector<bool>& drawn) {
#ifdef PIPESQUEEZE_HAVE_CHARTS
  return report::writeReportOffscreen(results, dir, &drawn);
#else
  const auto charts = suiteCharts(results);
  drawn.assign(charts.size(), false);
  return writeSuiteReport(results, charts, drawn,
                          "this build has no Qt (PIPESQUEEZE_BUILD_GUI=OFF), so the app's chart code is not in it", dir);
#endif
}

int seedsOf(const SuiteOptions& o, const Suite& s) {
  return o.seeds > 0 ? o.seeds : int(s.seeds.size());
}

std::shared_ptr<RunStore> openStore(const SuiteOptions& o) {
  auto store = std::make_shared<RunStore>(o.store.empty() ? RunStore::defaultPath() : o.store);
  store->reapOrphans();
  return store;
}

int list(const SuiteOptions& o) {
  json out = json::array();
  for (const auto& file : suiteFiles()) {
    const Suite s = Suite::load(file);
    if (o.json) {
      out.push_back({{"name", s.name},
                     {"title", s.title},
                     {"claim", s.claim},
                     {"citation", s.citation},
                     {"scale", s.scale},
                     {"variants", s.variants.size()},
                     {"seeds", s.seeds.size()},
                     {"rules", s.rules.size()},
                     {"gpu", !s.gpu.empty()},
                     {"path", file}});
      continue;
    }
    std::cout << s.name << "  (" << s.variants.size() << " variants x " << s.seeds.size() << " seed"
              << (s.seeds.size() == 1 ? "" : "s") << (s.gpu.empty() ? "" : ", GPU scale") << ")\n  " << s.title
              << "\n  \"" << s.claim << "\"\n  " << s.citation << "\n\n";
  }
  if (o.json)
    std::cout << out.dump() << "\n";
  else
    std::cout << "Run one with: pipesqueeze-cli suite run NAME [--seeds N] [--quick] [--gpu]\n";
  return 0;
}

// One line per run of the suite as it starts, is skipped or finishes.
void printRunEvent(const SuiteRunEvent& e) {
  char where[48];
  std::snprintf(where, sizeof where, "[%*d/%d] ", int(std::to_string(e.total).size()), e.index, e.total);
  const std::string who = e.variant.empty() ? "prepare" : e.variant + " seed " + std::to_string(e.seed);
  switch (e.kind) {
    case SuiteRunEvent::Kind::Prepare:
      std::cout << "prepare: " << e.reason << " ..." << std::endl;
      break;
    case SuiteRunEvent::Kind::Start:
      std::cout << where << who << " ..." << (e.reason.empty() ? "" : " (" + e.reason + ")") << std::endl;
      break;
    case SuiteRunEvent::Kind::Skip:
      std::cout << where << who << ": already in the store (run " << e.run_id << ", " << e.status << ")" << std::endl;
      break;
    case SuiteRunEvent::Kind::Finish:
      std::cout << (e.variant.empty() ? std::string("prepare: ") : std::string(where) + who + ": ") << e.status
                << " in " << duration(e.seconds) << " (run " << e.run_id << (headline(e.summary).empty() ? "" : ", ")
                << headline(e.summary) << ")" << (e.reason.empty() ? "" : ": " + e.reason) << std::endl;
      break;
  }
}

// Runs the suite's missing runs; Ctrl-C cancels the one in progress and keeps what finished.
SuiteOutcome runMissing(SuiteRunner& runner, const Suite& suite, int seeds, const SuiteOptions& o) {
  const bool terminal = isatty(fileno(stderr));
  auto onSession = [&](Session& s) {
    if (!o.json || terminal) s.telemetry().addSink(std::make_shared<ProgressPrinter>(stderr, terminal));
  };
  runner.reuseAnyVersion(o.anyVersion);
  struct Active {
    explicit Active(SuiteRunner* r) { activeRunner = r; }
    ~Active() { activeRunner = nullptr; }
  } active(&runner);
  StopOnSignal interrupt(cancelActiveRunner);
  return runner.run(suite, seeds, o.scale(), printRunEvent, onSession);
}

void printOutcome(const Suite& suite, int seeds, const SuiteOptions& o, const SuiteOutcome& outcome,
                  const SuiteResults& results) {
  if (o.json) {
    std::cout << json{{"suite", suite.name},
                      {"ran", outcome.ran},
                      {"skipped", outcome.skipped},
                      {"unsuccessful", outcome.unsuccessful},
                      {"cancelled", outcome.cancelled},
                      {"missing", results.missing()},
                      {"verdicts", verdictsJson(results)}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << suite.name << ": " << outcome.ran << " run, " << outcome.skipped << " already done"
            << (outcome.unsuccessful ? ", " + std::to_string(outcome.unsuccessful) + " failed or stopped" : "")
            << (results.missing() ? ", " + std::to_string(results.missing()) + " still missing" : "") << "\n";
  printVerdicts(results);
  std::cout << "Report: pipesqueeze-cli suite report " << suite.name
            << (o.seeds > 0 ? " --seeds " + std::to_string(seeds) : "") << o.scale().flags() << " -o DIR\n";
}

// The suite with only the variants asked for (all when none are), each checked against the suite's own.
Suite onlyVariants(const Suite& suite, const std::vector<std::string>& names) {
  if (names.empty()) return suite;
  Suite only = suite;
  only.variants.clear();
  for (const auto& name : names) {
    const auto v = std::find_if(suite.variants.begin(), suite.variants.end(), [&](auto& x) { return x.name == name; });
    if (v == suite.variants.end()) {
      std::string known;
      for (const auto& x : suite.variants) known += (known.empty() ? "" : ", ") + x.name;
      throw ConfigError("suite " + suite.name + " has no variant '" + name + "'; its variants are " + known);
    }
    if (std::none_of(only.variants.begin(), only.variants.end(), [&](auto& x) { return x.name == name; }))
      only.variants.push_back(*v);
  }
  return only;
}

int run(const SuiteOptions& o) {
  const Suite suite = Suite::load(resolveSuite(o.names.at(0)));
  const Suite toRun = onlyVariants(suite, o.variants);
  const int seeds = seedsOf(o, suite);
  planSuite(toRun, seeds, o.scale());  // every configuration checked before the store is touched
  auto store = openStore(o);
  SuiteRunner runner(store);
  const SuiteOutcome outcome = runMissing(runner, toRun, seeds, o);
  printOutcome(suite, seeds, o, outcome, collectSuiteResults(*store, suite, seeds, o.scale()));
  if (outcome.cancelled) {
    std::cerr << "suite stopped; what finished is kept: run the same command again to continue\n";
    return 1;
  }
  return outcome.unsuccessful ? 1 : 0;
}

int report(const SuiteOptions& o) {
  const Suite suite = Suite::load(resolveSuite(o.names.at(0)));
  const int seeds = seedsOf(o, suite);
  auto store = openStore(o);
  const SuiteResults results = collectSuiteResults(*store, suite, seeds, o.scale());
  std::vector<bool> drawn;
  const std::string path = writeReportFiles(results, o.output, drawn);
  if (o.json) {
    std::cout << json{{"suite", suite.name},
                      {"report", path},
                      {"missing", results.missing()},
                      {"charts", drawn},
                      {"verdicts", verdictsJson(results)}}
                     .dump()
              << std::endl;
    return 0;
  }
  std::cout << "wrote " << path << " and " << o.output << "/report.md\n";
  printVerdicts(results);
  if (results.missing())
    std::cout << results.missing() << " planned runs are missing: pipesqueeze-cli suite run " << suite.name
              << " --seeds " << seeds << o.scale().flags() << "\n";
  return 0;
}

}  // namespace

void addSuiteCommand(CLI::App& app, SuiteOptions& o) {
  auto* suite = app.add_subcommand("suite", "Claim suites: a paper's claim as a grid of runs, judged with a report");
  suite->require_subcommand(1);
  auto* list = suite->add_subcommand("list", "List the bundled suites and the claims they test");
  list->add_flag("--json", o.json, "one JSON array on stdout");
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("name", o.names, "suite name (see suite list) or file")->required()->expected(1);
    cmd->add_option("--seeds", o.seeds, "seeds per variant (default: as many as the suite lists)")
        ->check(CLI::Range(1, 100));
    cmd->add_flag("--quick", o.quick, "the suite's quick scale: a first look, and what CI runs");
    cmd->add_flag(
        "--gpu", o.gpu,
        "the suite's GPU scale: its claim on models at the size GPUs are for (with --quick: for a few steps)");
    cmd->add_option("--store", o.store, "run store file (default: $XDG_DATA_HOME/pipesqueeze/runs.sqlite)");
    cmd->add_flag("--json", o.json, "print the outcome as one JSON object on the last line of stdout");
  };
  auto* run = suite->add_subcommand("run", "Run every run of a suite that the store does not hold yet (it resumes)");
  common(run);
  run->add_option("--variants", o.variants, "only these variants, comma-separated (the rest of the grid waits)")
      ->delimiter(',');
  run->add_flag("--any-version", o.anyVersion,
                "also reuse finished runs of the same settings made by other code (by default they run again)");
  auto* report = suite->add_subcommand("report", "Write report.md and report.html (verdicts and charts) into a folder");
  common(report);
  report->add_option("-o,--output", o.output, "folder for the report (created)")->required();
}

int runSuite(CLI::App& app, const SuiteOptions& o) {
  auto* suite = app.get_subcommand("suite");
  if (suite->got_subcommand("list")) return list(o);
  if (suite->got_subcommand("run")) return run(o);
  return report(o);
}

}  // namespace ps::cli
