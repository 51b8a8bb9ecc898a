// ps::RunStore opened read-only: it reads what writers committed, writes nothing, and refuses what it cannot read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreSchema.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

using ps::RunStore;
using ps::StoreAccess;
using ps::StoreError;
using ps::test::RunStoreRawDb;
using ps::test::RunStoreTempDir;

namespace {

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename F>
std::string storeErrorOf(F&& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

TEST(RunStoreReadOnly, ReadsWhatAWriterCommittedAndRefusesEveryWrite) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  RunStore writer(path);  // stays open: the WAL and its shared memory are there, as while a run trains
  const int64_t id = writer.createRun("live", "{}", "v", "a,b");
  writer.append(id, {{0, "train/loss", 2.5, 0.1, 0.0}, {1, "train/loss", 2.0, 0.2, 0.0}}, {}, {});

  RunStore reader(path, StoreAccess::ReadOnly);
  ASSERT_EQ(reader.listRuns().size(), 1u);
  EXPECT_EQ(reader.run(id)->tags, "a,b");
  EXPECT_EQ(reader.metrics(id, "train/loss").size(), 2u);
  writer.append(id, {{2, "train/loss", 1.5, 0.3, 0.0}}, {}, {});
  EXPECT_EQ(reader.metrics(id, "train/loss").size(), 3u) << "a reader sees later commits";

  for (const auto& write :
       std::vector<std::function<void()>>{[&] { reader.setTags(id, "c"); }, [&] { reader.createRun("x", "{}", "v"); },
                                          [&] {
                                            reader.append(id, {{3, "train/loss", 1.0, 0.4, 0.0}}, {}, {});
                                          },
                                          [&] { reader.deleteRun(id); }}) {
    const std::string msg = storeErrorOf(write);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot be written"), std::string::npos) << msg;
  }
  EXPECT_EQ(writer.run(id)->tags, "a,b");
  EXPECT_EQ(writer.metrics(id, "train/loss").size(), 3u);
}

TEST(RunStoreReadOnly, AMissingFileIsNotCreated) {
  RunStoreTempDir dir;
  const std::string path = dir.file("sub/runs.sqlite");
  const std::string msg = storeErrorOf([&] { RunStore store(path, StoreAccess::ReadOnly); });
  EXPECT_NE(msg.find("no run store file at " + path), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(dir.file("sub")));
}

// An older store cannot be upgraded without writing, so reading it read-only is refused with the way out, and the
// file is left as it was.
TEST(RunStoreReadOnly, AnOlderStoreIsRefusedNotUpgraded) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  {
    RunStoreRawDb raw(path);
    raw.exec("PRAGMA application_id = 1347637586");
    raw.exec(ps::runStoreMigrations().front().sql);
    raw.exec("PRAGMA user_version = 1");
  }
  const std::string before = bytesOf(path);
  const std::string msg = storeErrorOf([&] { RunStore store(path, StoreAccess::ReadOnly); });
  EXPECT_NE(msg.find("schema version 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Open it once where it can be written"), std::string::npos) << msg;
  EXPECT_EQ(bytesOf(path), before);
  EXPECT_EQ(RunStoreRawDb(path).text("PRAGMA user_version"), "1");
}

}  // namespace
