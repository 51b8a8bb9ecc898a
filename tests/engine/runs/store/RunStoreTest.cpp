// ps::RunStore: round trips, schema versions, deletion, paths and damaged files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreSchema.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

using ps::RunStore;
using ps::StoreError;
using ps::test::bytesOf;
using ps::test::RunStoreEnvGuard;
using ps::test::RunStoreRawDb;
using ps::test::RunStoreTempDir;
using ps::test::storeErrorOf;

namespace {

const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

void fillRun(RunStore& store, int64_t id) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  store.append(id,
               {{0, "train/loss", 2.5, 0.1, 0.0},
                {0, "link0/fwd/wire_bytes", 1024, 0.1, 0.01},
                {1, "train/loss", 2.0, 0.2, 0.02},
                {1, "train/acc", nan, 0.2, 0.02}},
               {{1, 0.2, "lr_change", R"({"lr":0.05})"}},
               {{1, "grad/layer0", -1.0, 1.0, {1.f, 2.f, 0.5f}}, {1, "act/empty", 0.0, 0.0, {}}});
  store.addCheckpoint(id, {1, "/ckpt/step1.pt"});
}

}  // namespace

TEST(RunStore, RoundTripsEveryTable) {
  RunStoreTempDir dir;
  const std::string path = dir.file("nested/folder/runs.sqlite");  // parents get created
  int64_t id = 0;
  {
    RunStore store(path);
    EXPECT_EQ(store.path(), path);
    id = store.createRun("baseline", R"({"lr":0.1})", "abc123", " fast, gpu ,fast,,", "first try");
    fillRun(store, id);
  }
  RunStore store(path);  // everything below was read back from the file
  const auto info = store.run(id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->id, id);
  EXPECT_EQ(info->name, "baseline");
  EXPECT_EQ(info->tags, "fast,gpu");
  EXPECT_EQ(info->notes, "first try");
  EXPECT_EQ(info->status, "running");
  EXPECT_TRUE(std::regex_match(info->created, kIsoUtc)) << info->created;
  EXPECT_EQ(info->finished, "");
  EXPECT_EQ(info->config_json, R"({"lr":0.1})");
  EXPECT_EQ(info->code_version, "abc123");

  const auto m = store.metrics(id);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].step, 0);
  EXPECT_EQ(m[0].key, "link0/fwd/wire_bytes");
  EXPECT_EQ(m[0].value, 1024);
  EXPECT_EQ(m[0].emulated_s, 0.01);
  EXPECT_EQ(m[1].key, "train/loss");
  EXPECT_EQ(m[1].value, 2.5);
  EXPECT_EQ(m[1].wall_s, 0.1);
  EXPECT_EQ(m[2].key, "train/acc");
  EXPECT_TRUE(std::isnan(m[2].value));  // NaN survives the trip
  EXPECT_EQ(m[3].step, 1);
  EXPECT_EQ(m[3].value, 2.0);
  EXPECT_EQ(store.metrics(id, "train/").size(), 3u);
  EXPECT_EQ(store.metrics(id, "link0").size(), 1u);
  EXPECT_TRUE(store.metrics(id, "val/").empty());
  EXPECT_EQ(store.metricKeys(id),
            (std::vector<std::string>{"link0/fwd/wire_bytes", "train/acc", "train/loss"}));

  const auto ev = store.events(id);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].step, 1);
  EXPECT_EQ(ev[0].wall_s, 0.2);
  EXPECT_EQ(ev[0].kind, "lr_change");
  EXPECT_EQ(ev[0].detail_json, R"({"lr":0.05})");

  const auto h = store.histograms(id);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].name, "act/empty");
  EXPECT_TRUE(h[0].counts.empty());
  EXPECT_EQ(h[1].name, "grad/layer0");
  EXPECT_EQ(h[1].lo, -1.0);
  EXPECT_EQ(h[1].hi, 1.0);
  EXPECT_EQ(h[1].counts, (std::vector<float>{1.f, 2.f, 0.5f}));
  EXPECT_EQ(store.histograms(id, "grad/").size(), 1u);

  const auto ck = store.checkpoints(id);
  ASSERT_EQ(ck.size(), 1u);
  EXPECT_EQ(ck[0].step, 1);
  EXPECT_EQ(ck[0].path, "/ckpt/step1.pt");

  store.rename(id, "renamed");
  store.setTags(id, "a,b");
  store.setNotes(id, "better notes");
  store.finishRun(id, "diverged", "loss became NaN at step 1", R"({"best_acc":0.5})");
  const auto done = store.run(id);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->name, "renamed");
  EXPECT_EQ(done->tags, "a,b");
  EXPECT_EQ(done->notes, "better notes");
  EXPECT_EQ(done->status, "diverged");
  EXPECT_EQ(done->status_reason, "loss became NaN at step 1");
  EXPECT_EQ(done->summary_json, R"({"best_acc":0.5})");
  EXPECT_TRUE(std::regex_match(done->finished, kIsoUtc)) << done->finished;

  const int64_t newer = store.createRun("second", "{}", "abc123");
  const auto runs = store.listRuns();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, newer);  // newest first
  EXPECT_EQ(runs[1].id, id);
  EXPECT_EQ(store.integrityCheck(), "ok");
}

TEST(RunStore, UnknownRunIdNamesTheStoreAndTheFix) {
  RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const std::string expected =
      "no run with id 42 in " + store.path() + "; list runs with: pipesqueeze-cli runs list";
  EXPECT_FALSE(store.run(42));
  EXPECT_EQ(storeErrorOf([&] { store.finishRun(42, "finished", "", ""); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.append(42, {{0, "k", 1, 0, 0}}, {}, {}); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.addCheckpoint(42, {0, "p"}); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.metrics(42); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.metricKeys(42); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.events(42); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.histograms(42); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.checkpoints(42); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.rename(42, "x"); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.setTags(42, "x"); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.setNotes(42, "x"); }), expected);
  EXPECT_EQ(storeErrorOf([&] { store.deleteRun(42); }), expected);
}

TEST(RunStore, RejectsBadStatusAndBadJson) {
  RunStoreTempDir dir;
  RunStore store(dir.file("runs.sqlite"));
  const int64_t id = store.createRun("r", "", "v");  // empty config is allowed
  EXPECT_NE(storeErrorOf([&] { store.finishRun(id, "running", "", ""); }).find("use one of"),
            std::string::npos);
  EXPECT_NE(storeErrorOf([&] { store.finishRun(id, "finished", "", "{oops"); }).find("JSON"),
            std::string::npos);
  EXPECT_NE(storeErrorOf([&] { store.createRun("r", "{oops", "v"); }).find("JSON"),
            std::string::npos);
  EXPECT_EQ(store.listRuns().size(), 1u);
  EXPECT_EQ(store.run(id)->status, "running");
}

TEST(RunStore, MigratesAnEmptyFileAndReopens) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  std::ofstream(path).close();  // zero bytes, as `touch` leaves it
  {
    RunStore store(path);
    EXPECT_EQ(store.schemaVersion(), ps::runStoreLatestVersion());
    EXPECT_EQ(store.schemaVersion(), 2);
    store.createRun("kept", "{}", "v");
  }
  {
    RunStoreRawDb raw(path);
    EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
    for (const char* table : {"runs", "metrics", "events", "histograms", "checkpoints", "step_traces"})
      EXPECT_EQ(raw.count(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") +
                          table + "'"),
                1)
          << table;
    EXPECT_EQ(raw.count("SELECT count(*) FROM sqlite_master WHERE name = "
                        "'metrics_by_run_key_step'"),
              1);
  }
  RunStore again(path);
  EXPECT_EQ(again.schemaVersion(), 2);
  ASSERT_EQ(again.listRuns().size(), 1u);
  EXPECT_EQ(again.listRuns()[0].name, "kept");
}

// A store written before step traces were kept (schema 1) gains their table; its runs stay and have no traces.
TEST(RunStore, AVersionOneStoreGainsStepTracesAndKeepsItsRuns) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  ps::test::writeVersionOneStore(path);
  RunStoreRawDb(path).exec("INSERT INTO runs(name, created) VALUES('old', '2026-01-01T00:00:00Z')");
  RunStore store(path);
  EXPECT_EQ(store.schemaVersion(), 2);
  ASSERT_EQ(store.listRuns().size(), 1u);
  const int64_t old = store.listRuns()[0].id;
  EXPECT_TRUE(store.traces(old).empty());
  const int64_t id = store.createRun("new", "{}", "v");
  store.append(id, {}, {}, {}, {{1, 0, {1, 2, 3}}, {2, 0, {}}, {3, 1, {9}}});
  const auto traces = store.traces(id);
  ASSERT_EQ(traces.size(), 3u);
  EXPECT_EQ(traces[0].trace, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_TRUE(traces[1].trace.empty());
  EXPECT_EQ(traces[2].step, 3);
  EXPECT_EQ(traces[2].epoch, 1);
  store.deleteRun(id);
  EXPECT_EQ(RunStoreRawDb(path).count("SELECT count(*) FROM step_traces"), 0) << "a deleted run's traces stayed";
}

// A newer build's store is refused before anything writes to it: byte for byte the same afterwards, in the
// rollback journal mode that build left it in (switching to WAL would rewrite its header), no -wal file made.
TEST(RunStore, RefusesAStoreFromANewerVersionAndLeavesItByteForByte) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  { RunStore store(path); }
  {
    RunStoreRawDb raw(path);
    raw.exec("PRAGMA journal_mode = DELETE");
    raw.exec("PRAGMA user_version = 99");
  }
  const std::string before = bytesOf(path);
  ASSERT_FALSE(before.empty());
  const std::string msg = storeErrorOf([&] { RunStore store(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("newer PipeSqueeze"), std::string::npos) << msg;
  EXPECT_NE(msg.find("99"), std::string::npos) << msg;
  EXPECT_EQ(bytesOf(path), before) << "the refused store changed";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(RunStore, DeleteCascadesToEveryTable) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  RunStore store(path);
  const int64_t doomed = store.createRun("doomed", "{}", "v");
  const int64_t kept = store.createRun("kept", "{}", "v");
  fillRun(store, doomed);
  fillRun(store, kept);
  store.deleteRun(doomed);
  EXPECT_FALSE(store.run(doomed));
  RunStoreRawDb raw(path);
  for (const char* table : {"metrics", "events", "histograms", "checkpoints"}) {
    const std::string where = std::string(" FROM ") + table + " WHERE run_id = ";
    EXPECT_EQ(raw.count("SELECT count(*)" + where + std::to_string(doomed)), 0) << table;
    EXPECT_GT(raw.count("SELECT count(*)" + where + std::to_string(kept)), 0) << table;
  }
  EXPECT_EQ(store.metrics(kept).size(), 4u);
  EXPECT_THROW(store.deleteRun(doomed), StoreError);
}

TEST(RunStore, DefaultPathHonoursEnvironment) {
  RunStoreEnvGuard store("PIPESQUEEZE_STORE", std::string("/data/mine.sqlite"));
  RunStoreEnvGuard xdg("XDG_DATA_HOME", std::string("/xdg/data"));
  RunStoreEnvGuard home("HOME", std::string("/home/someone"));
  EXPECT_EQ(RunStore::defaultPath(), "/data/mine.sqlite");
  {
    RunStoreEnvGuard empty("PIPESQUEEZE_STORE", std::string(""));  // empty counts as unset
    EXPECT_EQ(RunStore::defaultPath(), "/xdg/data/pipesqueeze/runs.sqlite");
    RunStoreEnvGuard noXdg("XDG_DATA_HOME", std::nullopt);
    EXPECT_EQ(RunStore::defaultPath(), "/home/someone/.local/share/pipesqueeze/runs.sqlite");
    RunStoreEnvGuard relXdg("XDG_DATA_HOME", std::string("relative/dir"));  // ignored (XDG)
    EXPECT_EQ(RunStore::defaultPath(), "/home/someone/.local/share/pipesqueeze/runs.sqlite");
  }
}

TEST(RunStore, GarbageFileGivesStoreErrorNamingIt) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>((i * 7919) % 251));
  }
  const std::string msg = storeErrorOf([&] { RunStore store(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a PipeSqueeze run store"), std::string::npos) << msg;
}

TEST(RunStore, ForeignSqliteFileIsNotTakenOver) {
  RunStoreTempDir dir;
  const std::string path = dir.file("other.sqlite");
  { RunStoreRawDb(path).exec("CREATE TABLE photos(id INTEGER)"); }
  const std::string msg = storeErrorOf([&] { RunStore store(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a PipeSqueeze run store"), std::string::npos) << msg;
  EXPECT_EQ(RunStoreRawDb(path).count("SELECT count(*) FROM sqlite_master"), 1);
}

// A foreign database that happens to say user_version = 1 (our schema's version) is refused by its application id,
// and refused before anything is written: it keeps its rollback journal, no -wal file appears, every byte stays.
TEST(RunStore, AForeignFileWithOurSchemaVersionIsRefusedAndLeftByteForByte) {
  RunStoreTempDir dir;
  const std::string path = dir.file("other.sqlite");
  {
    RunStoreRawDb raw(path);
    raw.exec("CREATE TABLE runs(id INTEGER)");
    raw.exec("PRAGMA user_version = 1");
  }
  auto bytesOf = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytesOf(path);
  const std::string msg = storeErrorOf([&] { RunStore store(path); });
  EXPECT_NE(msg.find("not a PipeSqueeze run store (application id 0); it was left as it was"), std::string::npos)
      << msg;
  EXPECT_EQ(bytesOf(path), before) << "the refused file changed";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << "the refused file was switched to WAL";
}

TEST(RunStore, FolderAsPathGivesStoreError) {
  RunStoreTempDir dir;
  const std::string folder = dir.file("a-folder");
  std::filesystem::create_directories(folder);
  const std::string msg = storeErrorOf([&] { RunStore store(folder); });
  EXPECT_NE(msg.find(folder + " is a folder"), std::string::npos) << msg;
}

TEST(RunStore, ReapsOnlyRunsWhoseOwnerIsGone) {
  if (!std::filesystem::exists("/proc/self/stat")) GTEST_SKIP() << "needs /proc";
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  RunStore store(path);
  const int64_t mine = store.createRun("mine", "{}", "v");  // this process is alive
  const int64_t reused = store.createRun("pid reused", "{}", "v");
  const int64_t finished = store.createRun("finished", "{}", "v");
  store.finishRun(finished, "finished", "", "");
  // Same pid, another start time: the pid now belongs to a different process.
  RunStoreRawDb(path).exec("UPDATE runs SET owner_start = 'not-now' WHERE id = " +
                           std::to_string(reused));
  EXPECT_EQ(store.reapOrphans(), 1);
  EXPECT_EQ(store.run(mine)->status, "running");
  EXPECT_EQ(store.run(finished)->status, "finished");
  const auto r = store.run(reused);
  EXPECT_EQ(r->status, "failed");
  EXPECT_EQ(r->status_reason, "process ended without closing the run");
  EXPECT_FALSE(r->finished.empty());
  EXPECT_EQ(store.reapOrphans(), 0);
}
