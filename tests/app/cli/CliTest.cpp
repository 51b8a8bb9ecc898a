#include "tests/TestFiles.h"
#include "tests/app/cli/CliRunner.h"

#include "engine/core/CodeVersion.h"
#include "engine/data/Npy.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

namespace ps::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string freshStore(const std::string& name) {
  return freshStoreIn("pipesqueeze-cli-test", name);
}

const std::string kSmoke = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

int lineCount(const std::string& s) {
  return int(std::count(s.begin(), s.end(), '\n'));
}

TEST(Cli, TrainPrintsAJsonSummaryLastAndExitsZero) {
  const auto store = freshStore("json");
  auto r = runCli({"train", "--preset", kSmoke, "--store", store, "--json", "--name", "cli smoke"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json summary = json::parse(r.lastLine());
  for (const char* key :
       {"run_id", "status", "steps", "train_loss", "eval_loss", "eval_accuracy", "eval_loss_uncompressed",
        "eval_accuracy_uncompressed", "bytes_raw", "bytes_wire", "wall_seconds", "emulated_seconds"})
    EXPECT_TRUE(summary.contains(key)) << key;
  EXPECT_EQ(summary["status"], "finished");
  EXPECT_EQ(summary["steps"], 60);
  RunStore s(store);
  auto run = s.run(summary["run_id"].get<int64_t>());
  ASSERT_TRUE(run);
  EXPECT_EQ(run->name, "cli smoke");
  EXPECT_EQ(run->status, "finished");
  EXPECT_EQ(json::parse(run->summary_json)["steps"], 60);
}

TEST(Cli, VersionNamesTheBuildAndItsLibTorch) {
  const auto r = runCli({"--version"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find(std::string("pipesqueeze-cli ") + ps::codeVersion()), std::string::npos) << r.out;
  const size_t torch = r.out.find("(LibTorch ");
  ASSERT_NE(torch, std::string::npos) << r.out;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(r.out[torch + 10]))) << r.out;
}

// A preset saved in the app's user folder is found by name, and `presets` says where each one was found.
TEST(Cli, FindsTheUsersPresetsByNameAndListsWhereEachCameFrom) {
  const auto home = fs::temp_directory_path() / ("pipesqueeze-cli-xdg-" + std::to_string(::getpid()));
  fs::remove_all(home);
  fs::create_directories(home / "pipesqueeze" / "presets");
  const std::string mine = (home / "pipesqueeze" / "presets" / "my-smoke.json").string();
  fs::copy_file(kSmoke, mine);
  const std::vector<std::string> env{"XDG_DATA_HOME=" + home.string(), "PIPESQUEEZE_STORE=" + freshStore("xdg")};

  const auto listed = runCli({"presets"}, env);
  EXPECT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_NE(listed.out.find("1. user: " + (home / "pipesqueeze" / "presets").string()), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find(mine), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find(std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json"), std::string::npos)
      << listed.out;

  const auto trained = runCli({"train", "--preset", "my-smoke", "--set", "train.max_steps=5", "--json"}, env);
  EXPECT_EQ(trained.exitCode, 0) << trained.err;
  EXPECT_EQ(nlohmann::json::parse(trained.lastLine())["status"], "finished") << trained.out;
  fs::remove_all(home);
}

TEST(Cli, PipedOutputIsPlainLines) {
  const auto store = freshStore("plain");
  auto r = runCli({"train", "--preset", kSmoke, "--store", store});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);  // no progress bar redraws when not on a terminal
  EXPECT_NE(r.err.find("step 60/60"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("finished after 60 steps"), std::string::npos);
}

TEST(Cli, AqsgdMemoryIsShownBeforeTheRunAndALimitRefusesIt) {
  const auto store = freshStore("aqsgd");
  const std::vector<std::string> aqsgd{"--set", "compression.forward.method=quantize", "--set",
                                       "compression.forward.feedback=aqsgd"};
  std::vector<std::string> args{"train", "--preset", kSmoke, "--store", store};
  args.insert(args.end(), aqsgd.begin(), aqsgd.end());
  auto r = runCli(args);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("AQ-SGD buffers need 0.1 MB"), std::string::npos) << r.err;
  args.insert(args.end(), {"--set", "compression.aqsgd_memory_limit_mb=0.01"});
  auto refused = runCli(args);
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("above compression.aqsgd_memory_limit_mb"), std::string::npos) << refused.err;
}

TEST(Cli, BadInputExitsNonZeroWithOneLineNamingTheProblem) {
  const auto store = freshStore("bad");
  struct Case {
    std::vector<std::string> args;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{"--set", "train.lr_rate=1"}, "did you mean 'train.lr'"},
      {{"--set", "pipeline.stages=9"}, "pipeline.stages"},
      {{"--set", "pipeline.schedule=zigzag"}, "one of gpipe, 1f1b"},
      {{"--set", "train.batch_size"}, "key=value"},
      {{"--set", "pipeline.stages=8"}, "blocks"},  // the smoke model has 4 blocks
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"train", "--preset", kSmoke, "--store", store};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 2) << c.fragment << ": " << r.err;
    EXPECT_EQ(lineCount(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << r.err;
  }
  auto missing = runCli({"train", "--preset", "no-such-preset", "--store", store});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("no preset 'no-such-preset'"), std::string::npos) << missing.err;
  // No run was recorded for input that never started.
  RunStore s(store);
  EXPECT_TRUE(s.listRuns().empty());
}

TEST(Cli, MissingDataNamesTheFileAndTheInstallCommand) {
  const auto store = freshStore("nodata");
  auto r = runCli({"train", "--preset", "fashion-mnist-4stage", "--store", store},
                  {"PIPESQUEEZE_FASHION_MNIST=/nonexistent/fashion"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("/nonexistent/fashion"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("apt-get install dataset-fashion-mnist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("setup.sh"), std::string::npos) << r.err;
}

TEST(Cli, RunsListShowAndExport) {
  const auto store = freshStore("runs");
  auto trained = runCli({"train", "--preset", kSmoke, "--store", store, "--json"});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string id = std::to_string(json::parse(trained.lastLine())["run_id"].get<int64_t>());

  auto list = runCli({"runs", "list", "--store", store});
  EXPECT_EQ(list.exitCode, 0);
  EXPECT_NE(list.out.find("smoke"), std::string::npos);
  EXPECT_NE(list.out.find("finished"), std::string::npos);

  auto show = runCli({"runs", "show", id, "--store", store});
  ASSERT_EQ(show.exitCode, 0) << show.err;
  auto shown = json::parse(show.out);
  EXPECT_EQ(shown["config"]["task"], "synthetic");
  EXPECT_EQ(shown["events"].front()["kind"], "start");

  auto csv = runCli({"runs", "export", id, "--csv", "--store", store});
  ASSERT_EQ(csv.exitCode, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("step,wall_s,emulated_s,", 0), 0u) << csv.out.substr(0, 200);
  EXPECT_NE(csv.out.substr(0, csv.out.find('\n')).find("train/loss"), std::string::npos);
  EXPECT_EQ(lineCount(csv.out), 61);  // header + 60 steps

  const std::string file = store + ".csv";
  EXPECT_EQ(runCli({"runs", "export", id, "--csv", "--store", store, "-o", file}).exitCode, 0);
  EXPECT_EQ(fs::file_size(file), csv.out.size());

  // TensorBoard: one event file per run under the folder, its path printed (or, in a build without protobuf, why not).
  const std::string tb = store + ".tb";
  auto board = runCli({"runs", "export", id, "--tensorboard", tb, "--store", store});
  if (board.exitCode == 0) {
    const std::string path = board.out.substr(0, board.out.find('\n'));
    EXPECT_EQ(path.rfind(tb + "/run-" + id + "-", 0), 0u) << board.out;
    EXPECT_GT(fs::file_size(path), 1000u);
  } else {
    EXPECT_NE(board.err.find("this build has no TensorBoard export"), std::string::npos) << board.err;
  }
  auto notAnId = runCli({"runs", "export", id, "seven", "--tensorboard", tb, "--store", store});
  EXPECT_NE(notAnId.exitCode, 0);
  EXPECT_NE(notAnId.err.find("'seven' is not one"), std::string::npos) << notAnId.err;
  auto missing = runCli({"runs", "export", id, "999", "--tensorboard", tb, "--store", store});
  EXPECT_NE(missing.exitCode, 0);
  EXPECT_NE(missing.err.find("no run with id 999"), std::string::npos) << missing.err;

  auto unknown = runCli({"runs", "show", "999", "--store", store});
  EXPECT_NE(unknown.exitCode, 0);
  EXPECT_NE(unknown.err.find("no run with id 999"), std::string::npos) << unknown.err;
  auto noStore = runCli({"runs", "list", "--store", store + ".missing"});
  EXPECT_NE(noStore.exitCode, 0);
  EXPECT_NE(noStore.err.find("no run store"), std::string::npos);
}

// `runs list --filter` takes the runs table's filter; a mistyped one is refused with the reason, not ignored.
TEST(Cli, RunsListTakesTheTablesFilter) {
  const auto path = freshStore("filter");
  {
    RunStore store(path);
    json sparse = Config::defaults().json;
    sparse["compression"]["forward"]["method"] = "topk";
    sparse["compression"]["forward"]["k"] = 0.01;
    const auto a = store.createRun("strong topk", Config::fromJson(sparse).json.dump(), "test", "suite-1", "");
    store.finishRun(a, "finished", "", json{{"steps", 300}, {"eval_accuracy", 0.87}}.dump());
    const auto b = store.createRun("dense", Config::defaults().json.dump(), "test", "", "");
    store.finishRun(b, "failed", "killed", json{{"steps", 3}}.dump());
  }
  const auto ids = [&](const std::string& filter) {
    auto r = runCli({"runs", "list", "--store", path, "--json", "--filter", filter});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::string> names;
    for (const auto& run : json::parse(r.out)) names.push_back(run["name"]);
    return names;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(ids("status:finished k<0.05 tag:suite-1 accuracy>=85%"), Names{"strong topk"});
  EXPECT_EQ(ids("-status:finished"), Names{"dense"});
  EXPECT_EQ(ids("topk"), Names{"strong topk"});
  EXPECT_EQ(ids("steps>1000"), Names{});
  EXPECT_EQ(ids("").size(), 2u);
  auto plain = runCli({"runs", "list", "--store", path, "-f", "dense"});
  EXPECT_EQ(plain.exitCode, 0);
  EXPECT_NE(plain.out.find("dense"), std::string::npos);
  EXPECT_EQ(plain.out.find("strong topk"), std::string::npos) << plain.out;

  auto typo = runCli({"runs", "list", "--store", path, "--filter", "stauts:finished"});
  EXPECT_NE(typo.exitCode, 0);
  EXPECT_NE(typo.err.find("no field 'stauts'; fields: id, name, status"), std::string::npos) << typo.err;
  auto misplaced = runCli({"runs", "show", "1", "--store", path, "--filter", "dense"});
  EXPECT_NE(misplaced.exitCode, 0);
  EXPECT_NE(misplaced.err.find("--filter is for runs list"), std::string::npos) << misplaced.err;
}

// A preset's name and tags describe the preset: a --set that changes training names the run after the change and
// tags it "modified"; one that only changes how it runs or what it reports keeps them.
TEST(Cli, ASetThatChangesTrainingLeavesThePresetsNameAndTags) {
  const auto store = freshStore("relabel");
  auto changed = runCli({"train", "--preset", kSmoke, "--store", store, "--json", "--set",
                         "compression.forward.method=topk", "--set", "train.max_steps=5"});
  ASSERT_EQ(changed.exitCode, 0) << changed.err;
  auto run = RunStore(store).run(json::parse(changed.lastLine())["run_id"].get<int64_t>());
  ASSERT_TRUE(run);
  EXPECT_EQ(run->name, "smoke, compression.forward.method=topk, train.max_steps=5");
  EXPECT_EQ(run->tags, "modified");
  auto same = runCli({"train", "--preset", kSmoke, "--store", store, "--json", "--set", "train.threads=1", "--set",
                      "telemetry.histogram_every=0"});
  ASSERT_EQ(same.exitCode, 0) << same.err;
  run = RunStore(store).run(json::parse(same.lastLine())["run_id"].get<int64_t>());
  EXPECT_EQ(run->name, "smoke");
  EXPECT_EQ(run->tags, "smoke");
}

TEST(Cli, RunsAreTaggedUntaggedAndAnnotatedFromTheCommandLine) {
  const auto store = freshStore("tags");
  auto trained = runCli({"train", "--preset", kSmoke, "--store", store, "--json"});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const int64_t run = json::parse(trained.lastLine())["run_id"].get<int64_t>();
  const std::string id = std::to_string(run);
  const std::string before = RunStore(store).run(run)->tags;  // the preset's own tags stay

  auto tagged = runCli({"runs", "tag", id, "baseline", "seed1, seed2", "baseline", "--store", store});
  ASSERT_EQ(tagged.exitCode, 0) << tagged.err;
  EXPECT_EQ(RunStore(store).run(run)->tags, (before.empty() ? "" : before + ",") + "baseline,seed1,seed2");
  EXPECT_NE(tagged.out.find("baseline, seed1, seed2"), std::string::npos) << tagged.out;

  EXPECT_EQ(runCli({"runs", "untag", id, "seed1", "--store", store}).exitCode, 0);
  EXPECT_EQ(RunStore(store).run(run)->tags, (before.empty() ? "" : before + ",") + "baseline,seed2");
  auto typo = runCli({"runs", "untag", id, "sede2", "--store", store});
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_NE(typo.err.find("has no tag 'sede2'"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("seed2"), std::string::npos) << typo.err;  // it lists what the run has
  EXPECT_EQ(RunStore(store).run(run)->tags, (before.empty() ? "" : before + ",") + "baseline,seed2");

  EXPECT_EQ(runCli({"runs", "note", id, "lr", "too", "high", "--store", store}).exitCode, 0);
  EXPECT_EQ(RunStore(store).run(run)->notes, "lr too high");
  EXPECT_EQ(runCli({"runs", "note", id, "", "--store", store}).exitCode, 0);
  EXPECT_EQ(RunStore(store).run(run)->notes, "");

  auto noTags = runCli({"runs", "tag", id, "--store", store});
  EXPECT_NE(noTags.exitCode, 0);
  EXPECT_NE(noTags.err.find("needs at least one tag"), std::string::npos) << noTags.err;
  auto unknown = runCli({"runs", "tag", "999", "x", "--store", store});
  EXPECT_NE(unknown.err.find("no run with id 999"), std::string::npos) << unknown.err;
  auto leftover = runCli({"runs", "show", id, "extra", "--store", store});
  EXPECT_NE(leftover.exitCode, 0);
  EXPECT_NE(leftover.err.find("'extra' is left over"), std::string::npos) << leftover.err;
}

// A run's name, tags and notes are anybody's bytes: listing or showing them never sends a control character (an
// escape sequence that would clear the screen, retitle the terminal or forge a row) to the terminal.
TEST(Cli, RunTextReachesTheTerminalEscaped) {
  const auto store = freshStore("escapes");
  // Literals split where a hex escape would swallow the digits after it ("\x9b" then "31m").
  const std::string hostile = "evil\x1b]0;pwned\x07\x1b[2J\r\nid 99 forged\xc2\x9b" "31m\x7f\xff";
  {
    RunStore s(store);
    const int64_t id = s.createRun(hostile + " é", "{}", "test", "t\x1b[1m", hostile);
    s.finishRun(id, "finished", hostile, "{}");
  }
  const auto clean = [](const std::string& out) {
    for (size_t i = 0; i < out.size(); ++i) {
      const auto c = static_cast<unsigned char>(out[i]);
      if ((c < 0x20 && c != '\n') || c == 0x7f) return "control byte " + std::to_string(c) + " at " + std::to_string(i);
      if (c == 0xc2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) < 0xa0)
        return "C1 control at " + std::to_string(i);
      if (c == 0xff) return std::string("a byte that is not UTF-8");
    }
    return std::string();
  };
  const auto list = runCli({"runs", "list", "--store", store});
  EXPECT_EQ(list.exitCode, 0) << list.err;
  EXPECT_EQ(clean(list.out), "") << list.out;
  EXPECT_NE(list.out.find("evil\\x1b]0;pwned"), std::string::npos) << list.out;
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 2) << "a header and one row: " << list.out;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"runs", "list", "--json", "--store", store},
                                               std::vector<std::string>{"runs", "show", "1", "--store", store}}) {
    const auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(clean(r.out), "") << r.out;
    const auto parsed = json::parse(r.out);  // still JSON, the text recoverable
    const json run = parsed.is_array() ? parsed.at(0) : parsed;
    EXPECT_NE(run["name"].get<std::string>().find("\x1b]0;pwned"), std::string::npos);
  }
  const auto note = runCli({"runs", "note", "1", "--store", store});
  EXPECT_EQ(clean(note.out), "") << note.out;
}

// Ctrl-C, SIGTERM and a closed terminal (SIGHUP) all stop after the step and keep the run, marked stopped.
TEST(Cli, InterruptStopsCleanlyAndKeepsTheRun) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(strsignal(sig));
    const auto store = freshStore("interrupt-" + std::to_string(sig));
    CliProcess p({"train", "--preset", kSmoke, "--store", store, "--json", "--set", "train.max_steps=1000000"});
    waitForSteps(store, 20);
    p.signal(sig);
    auto r = p.wait();
    EXPECT_EQ(r.exitCode, 1) << r.err;
    auto summary = json::parse(r.lastLine());
    EXPECT_EQ(summary["status"], "stopped");
    RunStore s(store);
    auto run = s.run(summary["run_id"].get<int64_t>());
    EXPECT_EQ(run->status, "stopped");
    EXPECT_EQ(s.metrics(run->id, "train/loss").size(), summary["steps"].get<size_t>());
    EXPECT_FALSE(s.metrics(run->id, "eval/loss").empty());  // the final evaluation still ran
  }
}

// A store that stops taking writes (here the file size limit of the process, as a full disk would) fails the run:
// one line naming the store and the failure, a failed summary, exit 1, and what was committed stays readable.
TEST(Cli, AStoreThatStopsTakingWritesFailsTheRun) {
  const auto store = freshStore("store-full");
  const auto r =
      runCli({"train", "--preset", kSmoke, "--store", store, "--json", "--set", "train.max_steps=1000000"}, {}, [] {
        ::signal(SIGXFSZ, SIG_IGN);                      // a write past the limit fails with EFBIG instead
        rlimit limit{rlim_t(3) << 20, rlim_t(3) << 20};  // a batch or two of steps fit
        ::setrlimit(RLIMIT_FSIZE, &limit);
      });
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const auto summary = json::parse(r.lastLine());
  EXPECT_EQ(summary["status"], "failed");
  const std::string reason = summary["reason"];
  EXPECT_NE(reason.find("the run store failed"), std::string::npos) << reason;
  EXPECT_NE(reason.find(store), std::string::npos) << reason;
  EXPECT_LT(summary["steps"].get<int64_t>(), 1000000);
  EXPECT_EQ(r.err.find("telemetry sink failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run failed: the run store failed"), std::string::npos) << r.err;
  RunStore s(store);  // without the limit: what was committed is whole
  EXPECT_EQ(s.integrityCheck(), "ok");
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_GT(s.metrics(runs[0].id, "train/loss").size(), 0u);
  EXPECT_NE(runs[0].status, "finished");
}

TEST(Cli, KillNineLeavesAReadableStore) {
  const auto store = freshStore("kill9");
  CliProcess p({"train", "--preset", kSmoke, "--store", store, "--set", "train.max_steps=1000000"});
  waitForSteps(store, 20);
  p.signal(SIGKILL);
  EXPECT_EQ(p.wait().exitCode, 128 + SIGKILL);
  RunStore s(store);
  EXPECT_EQ(s.integrityCheck(), "ok");
  auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "running");
  EXPECT_GE(s.metrics(runs[0].id, "train/loss").size(), 20u);
  // The next CLI start marks the orphan as failed.
  EXPECT_EQ(runCli({"train", "--preset", kSmoke, "--store", store, "--set", "train.max_steps=1"}).exitCode, 0);
  EXPECT_EQ(RunStore(store).run(runs[0].id)->status, "failed");
}

TEST(Cli, DivergenceEndsTheRunWithItsData) {
  const auto store = freshStore("diverge");
  auto r = runCli({"train", "--preset", kSmoke, "--store", store, "--json", "--set", "train.optimizer=sgd", "--set",
                   "train.lr=1000", "--set", "train.max_steps=300"});
  EXPECT_EQ(r.exitCode, 1);
  auto summary = json::parse(r.lastLine());
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_NE(r.err.find("lower train.lr"), std::string::npos) << r.err;
  RunStore s(store);
  EXPECT_EQ(s.run(summary["run_id"].get<int64_t>())->status, "diverged");
  EXPECT_FALSE(s.metrics(summary["run_id"].get<int64_t>(), "train/loss").empty());
}

// The codecs on saved tensors: encode prints what a link would report, decode gives the receiver's tensor back,
// --state carries a compensation over a sequence of calls, and bad input is refused with exit code 2.
// A standalone decode has no expected shape: what a payload declares is bounded (--max-elements) before anything is
// allocated, an input that is not a regular file is refused unread, and an empty tensor is refused at encode.
TEST(Cli, CodecDecodeIsBoundedBeforeItAllocates) {
  const auto dir = freshDir("pipesqueeze-codec-bounds");
  auto at = [&](const std::string& name) { return (dir / name).string(); };
  NpyArray x;
  x.shape = {16};
  for (int i = 0; i < 16; ++i) x.values.push_back(float(i) - 7.5f);
  writeNpy(at("x.npy"), x);
  ASSERT_EQ(runCli({"codec", "encode", "--method", "topk", "--set", "k=0.25", at("x.npy"), at("x.bin")}).exitCode, 0);
  // The payload's header declares 2^27 elements instead of 16: a few hundred bytes asking for 512 MiB.
  std::string bytes;
  {
    std::ifstream in(at("x.bin"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t magic = bytes.find("PSQZ");
  ASSERT_NE(magic, std::string::npos);
  const uint64_t huge = uint64_t(1) << 27;
  for (int i = 0; i < 8; ++i) bytes[magic + 8 + size_t(i)] = char((huge >> (8 * i)) & 0xff);
  std::ofstream(at("huge.bin"), std::ios::binary) << bytes;
  auto r = runCli({"codec", "decode", at("huge.bin"), at("y.npy")});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("134217728 elements"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-elements"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(at("y.npy")));
  r = runCli({"codec", "decode", "--max-elements", "8", at("x.bin"), at("y.npy")});  // a lower bound holds too
  EXPECT_EQ(r.exitCode, 2) << r.err;
  r = runCli({"codec", "decode", at("x.bin"), at("y.npy")});
  EXPECT_EQ(r.exitCode, 0) << r.err;

  r = runCli({"codec", "decode", "/dev/zero", at("z.npy")});  // endless: refused unread
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;

  NpyArray empty;
  empty.shape = {0};
  writeNpy(at("empty.npy"), empty);
  for (const char* method : {"none", "topk", "quantize", "powersgd"}) {
    r = runCli({"codec", "encode", "--method", method, at("empty.npy"), at("empty.bin")});
    EXPECT_EQ(r.exitCode, 2) << method << ": " << r.err;
    EXPECT_NE(r.err.find("the tensor is empty"), std::string::npos) << method << ": " << r.err;
  }
  fs::remove_all(dir);
}

// A --state folder is untrusted: the configuration must be a small regular file, every message replayed must have the
// folder's shape (recorded with its options), and a file swapped for an endless one is refused, never read forever.
TEST(Cli, CodecStateFoldersAreCheckedNotTrusted) {
  const auto dir = freshDir("pipesqueeze-codec-state");
  auto at = [&](const std::string& name) { return (dir / name).string(); };
  NpyArray a, b;
  a.shape = {8};
  b.shape = {4};
  for (int i = 0; i < 8; ++i) a.values.push_back(float(i));
  for (int i = 0; i < 4; ++i) b.values.push_back(float(i));
  writeNpy(at("a.npy"), a);
  writeNpy(at("b.npy"), b);
  const auto encode = [&](const std::string& state, const std::string& input, const std::string& out) {
    return runCli({"codec", "encode", "--method", "topk", "--set", "k=0.5", "--feedback", "ef", "--state", at(state),
                   at(input), at(out)});
  };
  ASSERT_EQ(encode("send", "a.npy", "1.bin").exitCode, 0);
  auto r = encode("send", "b.npy", "2.bin");  // another shape into the same folder
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("/shape"), std::string::npos) << r.err;
  fs::copy_file(at("b.npy"), at("send/input-000000.npy"), fs::copy_options::overwrite_existing);  // swapped
  r = encode("send", "a.npy", "2.bin");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("the folder was altered"), std::string::npos) << r.err;
  // Values that are not finite, in the tensor given or in one swapped into the folder: bad input naming the file.
  NpyArray bad = a;
  bad.values[3] = std::nanf("");
  writeNpy(at("nan.npy"), bad);
  r = runCli({"codec", "encode", "--method", "topk", at("nan.npy"), at("nan.bin")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(at("nan.npy") + ": holds values that are not finite"), std::string::npos) << r.err;
  fs::copy_file(at("nan.npy"), at("send/input-000000.npy"), fs::copy_options::overwrite_existing);
  r = encode("send", "a.npy", "2.bin");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(at("send/input-000000.npy") + ": holds values that are not finite"), std::string::npos) << r.err;
  fs::remove(at("send/codec.json"));
  fs::create_symlink("/dev/zero", at("send/codec.json"));
  r = encode("send", "a.npy", "2.bin");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("codec.json is not the folder's configuration"), std::string::npos) << r.err;

  // The receiver's folder: a payload of another shape swapped in is refused at replay.
  ASSERT_EQ(runCli({"codec", "decode", "--state", at("recv"), at("1.bin"), at("y1.npy")}).exitCode, 0);
  ASSERT_EQ(encode("other", "b.npy", "b.bin").exitCode, 0);
  fs::copy_file(at("b.bin"), at("recv/payload-000000.bin"), fs::copy_options::overwrite_existing);
  r = runCli({"codec", "decode", "--state", at("recv"), at("1.bin"), at("y2.npy")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("the folder was altered"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(Cli, CodecEncodesAndDecodesSavedTensorsWithAndWithoutState) {
  const auto dir = freshDir("pipesqueeze-codec-cli");
  auto at = [&](const std::string& name) { return (dir / name).string(); };
  NpyArray x;
  x.shape = {40, 50};
  for (int i = 0; i < 2000; ++i) x.values.push_back(float((i * 7919) % 1000) / 500.f - 1.f);
  writeNpy(at("x.npy"), x);

  auto r = runCli(
      {"codec", "encode", "--method", "topk", "--set", "k=0.1", "--set", "value_bits=16", at("x.npy"), at("x.bin")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto e = json::parse(r.lastLine());
  EXPECT_EQ(e["method"], "topk");
  EXPECT_EQ(e["shape"], json::array({40, 50}));
  EXPECT_DOUBLE_EQ(e["density"].get<double>(), 0.1);
  EXPECT_EQ(
      e["wire_bytes"].get<uint64_t>(), fs::file_size(at("x.bin")) - 12 - [&] {
        std::ifstream in(at("x.bin"), std::ios::binary);
        in.seekg(8);
        unsigned char b[4];
        in.read(reinterpret_cast<char*>(b), 4);
        return uint64_t(b[0]) | uint64_t(b[1]) << 8 | uint64_t(b[2]) << 16 | uint64_t(b[3]) << 24;
      }());
  EXPECT_GT(e["ratio"].get<double>(), 5.0);
  r = runCli({"codec", "decode", at("x.bin"), at("y.npy")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const NpyArray y = readNpy(at("y.npy"));
  ASSERT_EQ(y.shape, x.shape);
  double err = 0, norm = 0;
  int kept = 0;
  for (size_t i = 0; i < x.values.size(); ++i) {
    err += double(y.values[i] - x.values[i]) * (y.values[i] - x.values[i]);
    norm += double(x.values[i]) * x.values[i];
    kept += y.values[i] != 0;
  }
  EXPECT_EQ(kept, 200);
  EXPECT_NEAR(std::sqrt(err / norm), e["rel_error"].get<double>(), 1e-3);

  // EF21 over a sequence: the receiver's shift moves toward the tensor, so the second message lands closer.
  std::vector<double> errors;
  for (int i = 0; i < 3; ++i) {
    const std::string bin = at("s" + std::to_string(i) + ".bin");
    r = runCli({"codec", "encode", "--method", "topk", "--set", "k=0.1", "--feedback", "ef21", "--state", at("sender"),
                at("x.npy"), bin});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(json::parse(r.lastLine())["message"], i);
    errors.push_back(json::parse(r.lastLine())["rel_error"].get<double>());
    r = runCli({"codec", "decode", "--state", at("receiver"), bin, at("d.npy")});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  EXPECT_LT(errors[1], errors[0]);
  EXPECT_LT(errors[2], errors[1]);
  double last = 0;
  const NpyArray d = readNpy(at("d.npy"));
  for (size_t i = 0; i < x.values.size(); ++i) last += double(d.values[i] - x.values[i]) * (d.values[i] - x.values[i]);
  EXPECT_NEAR(std::sqrt(last / norm), errors[2], 1e-3);  // the receiver's state followed the sender's

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"codec", "encode", "--method", "nope", at("x.npy"), at("z.bin")},
           {"codec", "encode", "--method", "topk", "--set", "k=3", at("x.npy"), at("z.bin")},
           {"codec", "encode", "--method", "topk", "--set", "colour=red", at("x.npy"), at("z.bin")},
           {"codec", "encode", "--method", "topk", "--feedback", "aqsgd", at("x.npy"), at("z.bin")},
           {"codec", "encode", "--method", "topk", at("missing.npy"), at("z.bin")},
           {"codec", "encode", "--method", "fp16", "--state", at("sender"), at("x.npy"), at("z.bin")},
           {"codec", "decode", at("x.npy"), at("z.npy")}}) {
    r = runCli(bad);
    EXPECT_EQ(r.exitCode, 2) << bad[3] << ": " << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  }
  // A damaged payload is refused, naming the file.
  std::string bytes;
  {
    std::ifstream in(at("x.bin"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(at("cut.bin"), std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  r = runCli({"codec", "decode", at("cut.bin"), at("z.npy")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cut.bin"), std::string::npos) << r.err;
}

// A preset nesting arrays 200,000 deep crashed the CLI with a segfault; it is refused as bad input (exit 2).
TEST(Cli, ADeeplyNestedPresetIsBadInputNotACrash) {
  const auto path = (fs::temp_directory_path() / ("pipesqueeze-deep-" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << "{\"train\":{\"lr\":" << std::string(200000, '[') << std::string(200000, ']') << "}}";
  auto r = runCli({"train", "--preset", path, "--store", freshStore("deep")});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nests JSON"), std::string::npos) << r.err;
  fs::remove(path);
}

// A link planted at the export's old temporary name (out.csv.part) made `runs export -o out.csv` overwrite the
// link's target; the export now never writes through a link.
TEST(Cli, ExportNeverWritesThroughAPlantedLink) {
  const auto store = freshStore("export-link");
  auto r = runCli({"train", "--preset", kSmoke, "--store", store, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto id = std::to_string(json::parse(r.lastLine())["run_id"].get<int64_t>());
  const auto dir = fs::path(store).parent_path() / "export-link";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "victim") << "precious";
  fs::create_symlink(dir / "victim", dir / "out.csv.part");
  r = runCli({"runs", "export", id, "--csv", "-o", (dir / "out.csv").string(), "--store", store});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::ifstream victim(dir / "victim");
  std::string text((std::istreambuf_iterator<char>(victim)), {});
  EXPECT_EQ(text, "precious");
  EXPECT_GT(fs::file_size(dir / "out.csv"), 100u);
}

}  // namespace
}  // namespace ps::test
