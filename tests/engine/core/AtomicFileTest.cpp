// Files the lab writes (exports, checkpoints) replace their target whole and never write through a planted link.
#include "engine/core/AtomicFile.h"
#include "tests/TestFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <sys/stat.h>

namespace ps {
namespace {

namespace fs = std::filesystem;
using test::slurp;

fs::path freshDir() { return test::freshDir("pipesqueeze-atomic"); }

TEST(AtomicFile, ReplacesTheTargetWholeAndLeavesNoTemporary) {
  const auto dir = freshDir();
  const auto target = dir / "out.csv";
  std::ofstream(target) << "old";
  {
    AtomicFile f(target.string());
    f.stream() << "new contents";
    EXPECT_EQ(slurp(target), "old");  // nothing changes before the commit
    f.commit();
  }
  EXPECT_EQ(slurp(target), "new contents");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  {
    AtomicFile dropped(target.string());
    dropped.stream() << "never committed";
  }
  EXPECT_EQ(slurp(target), "new contents");
}

// A link at a temporary name is never written through, and one at the target is refused, not replaced or followed.
TEST(AtomicFile, NeverWritesThroughOrReplacesALink) {
  const auto dir = freshDir();
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir / "out.csv.part");
  AtomicFile::write((dir / "plain.csv").string(), "export");
  EXPECT_EQ(slurp(dir / "plain.csv"), "export");
  fs::create_symlink(victim, dir / "out.csv");
  try {
    AtomicFile::write((dir / "out.csv").string(), "export");
    FAIL() << "wrote at a link";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(dir / "out.csv"));
}

// A character device stays one: /dev/null takes the bytes and is still /dev/null afterwards.
TEST(AtomicFile, ACharacterDeviceIsWrittenThroughNotReplaced) {
  const auto dir = freshDir();
  const auto null = dir / "null";
  fs::create_symlink("/dev/null", null);  // as a user's `-o /dev/stdout` or `-o /dev/null`, through a link too
  AtomicFile::write(null.string(), "discarded");
  AtomicFile::write("/dev/null", "discarded");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_symlink(null));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary left
}

// A pipe gets the bytes as a stream, in order, and is still a pipe afterwards.
TEST(AtomicFile, APipeIsWrittenAsAStream) {
  const auto dir = freshDir();
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  AtomicFile::write(fifo.string(), "streamed bytes");
  reader.join();
  EXPECT_EQ(got, "streamed bytes");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// A folder (or a socket) at the target is refused with what it is, and stays.
TEST(AtomicFile, AFolderAtTheTargetIsRefused) {
  const auto dir = freshDir();
  fs::create_directory(dir / "out.csv");
  try {
    AtomicFile::write((dir / "out.csv").string(), "x");
    FAIL() << "wrote over a folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a folder"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(dir / "out.csv"));
}

TEST(AtomicFile, AFolderThatIsNotThereIsNamedInTheError) {
  const auto missing = freshDir() / "no-such-folder" / "out.csv";
  try {
    AtomicFile::write(missing.string(), "x");
    FAIL() << "wrote into a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ps
