// Files the lab writes (exports, checkpoints) replace their target whole and never write through a planted link.
#include "engine/core/AtomicFile.h"
#include "tests/TestFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST(AtomicFile, NeverWritesThroughALink) {
  const auto dir = freshDir();
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious";
  // A link at the old fixed temporary name and one at the target itself.
  fs::create_symlink(victim, dir / "out.csv.part");
  fs::create_symlink(victim, dir / "out.csv");
  AtomicFile::write((dir / "out.csv").string(), "export");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(dir / "out.csv"));  // the link was replaced, not followed
  EXPECT_EQ(slurp(dir / "out.csv"), "export");
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
