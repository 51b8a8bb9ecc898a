// ps::RunStore opened read-only: it reads what writers committed, writes nothing, and refuses what it cannot read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/runs/store/RunStore.h"
#include "engine/runs/store/RunStoreSchema.h"
#include "tests/engine/runs/store/RunStoreTestUtil.h"

using ps::RunStore;
using ps::StoreAccess;
using ps::StoreError;
using ps::test::bytesOf;
using ps::test::RunStoreRawDb;
using ps::test::RunStoreTempDir;
using ps::test::storeErrorOf;

namespace {

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

// Which access a store is opened with where the caller does not say: read-only exactly where this user cannot write
// the file or its folder. Checked in a child that is not root (permission bits do not bind root).
TEST(RunStoreReadOnly, AStoreThisUserCannotWriteIsReadOnlyWhereItIs) {
  RunStoreTempDir dir;
  const std::string path = dir.file("runs.sqlite");
  { RunStore(path).createRun("kept", "{}", "v"); }
  EXPECT_EQ(RunStore::accessFor(dir.file("new.sqlite")), StoreAccess::ReadWrite) << "a new store is created";
  const auto accessAsNobody = [&](const std::string& p) {
    const pid_t child = ::fork();
    if (child == 0) {
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(3);
      _exit(RunStore::accessFor(p) == StoreAccess::ReadOnly ? 1 : 0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const std::string folder = std::filesystem::path(path).parent_path().string();
  ::chmod(folder.c_str(), 0777);
  ::chmod(path.c_str(), 0666);
  EXPECT_EQ(accessAsNobody(path), 0) << "a store anybody may write is opened for writing";
  ::chmod(path.c_str(), 0444);
  EXPECT_EQ(accessAsNobody(path), 1) << "a file this user cannot write";
  ::chmod(path.c_str(), 0666);
  ::chmod(folder.c_str(), 0555);
  EXPECT_EQ(accessAsNobody(path), 1) << "a folder this user cannot write (SQLite's WAL lives beside the file)";
  ::chmod(folder.c_str(), 0700);
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
  ps::test::writeVersionOneStore(path);
  const std::string before = bytesOf(path);
  const std::string msg = storeErrorOf([&] { RunStore store(path, StoreAccess::ReadOnly); });
  EXPECT_NE(msg.find("schema version 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Open it once where it can be written"), std::string::npos) << msg;
  EXPECT_EQ(bytesOf(path), before);
  EXPECT_EQ(RunStoreRawDb(path).text("PRAGMA user_version"), "1");
}

}  // namespace
