#include "engine/data/FashionMnist.h"

#include "engine/data/IdxReader.h"
#include "engine/data/InstallHints.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <numeric>

namespace ps::data {
namespace {

using test::Bytes;
using test::expectDataError;
using test::idxBytes;
using test::TempDir;

constexpr const char* kAptHint = "sudo apt-get install dataset-fashion-mnist";

// Real data: skipped (visibly) when the package is not installed.
class FashionMnistReal : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FashionMnist::defaultRoot();
    if (!std::filesystem::exists(std::filesystem::path(root_) / "train-images-idx3-ubyte.gz"))
      GTEST_SKIP() << "Fashion-MNIST not found in " << root_ << "; " << kFashionMnistInstallHint;
  }
  std::string root_;
};

std::array<int, 10> labelCounts(const ImageSet& set) {
  std::array<int, 10> counts{};
  for (uint8_t l : set.labels) ++counts.at(l);
  return counts;
}

TEST_F(FashionMnistReal, LoadsTrainSplit) {
  const ImageSet set = FashionMnist::load(root_, true);
  EXPECT_EQ(set.count, 60000);
  EXPECT_EQ(set.rows, 28);
  EXPECT_EQ(set.cols, 28);
  ASSERT_EQ(set.pixels.size(), 60000u * 28 * 28);
  ASSERT_EQ(set.labels.size(), 60000u);
  for (int c : labelCounts(set)) EXPECT_EQ(c, 6000);
  EXPECT_EQ(set.labels[0], 9);  // the first training image is an ankle boot
  const double mean = std::accumulate(set.pixels.begin(), set.pixels.end(), 0.0) / double(set.pixels.size());
  EXPECT_NEAR(mean, 72.9404, 1e-3);
}

TEST_F(FashionMnistReal, LoadsTestSplit) {
  const ImageSet set = FashionMnist::load(root_, false);
  EXPECT_EQ(set.count, 10000);
  EXPECT_EQ(set.rows, 28);
  EXPECT_EQ(set.cols, 28);
  ASSERT_EQ(set.pixels.size(), 10000u * 28 * 28);
  for (int c : labelCounts(set)) EXPECT_EQ(c, 1000);
  const Bytes firstTen(set.labels.begin(), set.labels.begin() + 10);
  EXPECT_EQ(firstTen, (Bytes{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
}

TEST(FashionMnist, DefaultRootHonoursEnvironment) {
  {
    test::ScopedEnv env(kFashionMnistEnvVar, "/somewhere/else");
    EXPECT_EQ(FashionMnist::defaultRoot(), "/somewhere/else");
  }
  {
    test::ScopedEnv env(kFashionMnistEnvVar, nullptr);
    EXPECT_EQ(FashionMnist::defaultRoot(), "/usr/share/datasets/fashion-mnist");
  }
  {
    test::ScopedEnv env(kFashionMnistEnvVar, "");
    EXPECT_EQ(FashionMnist::defaultRoot(), "/usr/share/datasets/fashion-mnist");
  }
}

TEST(FashionMnist, MissingFolderNamesInstallCommand) {
  TempDir dir;
  const std::string root = dir.file("not-here");
  expectDataError([&] { FashionMnist::load(root, true); }, {root, kAptHint, kFashionMnistEnvVar});
}

TEST(FashionMnist, MissingFileNamesFileAndInstallCommand) {
  TempDir dir;
  test::writeGz(dir.file("train-labels-idx1-ubyte.gz"), idxBytes({2}, {1, 2}));
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-images-idx3-ubyte.gz"), "not found", kAptHint});
}

// Writes a tiny split into `dir`; the parameters make it invalid in one way each.
void writeSplit(const TempDir& dir, const std::string& prefix, const std::vector<uint32_t>& imageDims,
                const Bytes& labels) {
  uint32_t elements = 1;
  for (uint32_t d : imageDims) elements *= d;
  test::writeGz(dir.file(prefix + "-images-idx3-ubyte.gz"), idxBytes(imageDims, test::iota(elements)));
  test::writeGz(dir.file(prefix + "-labels-idx1-ubyte.gz"), idxBytes({static_cast<uint32_t>(labels.size())}, labels));
}

TEST(FashionMnist, LoadsSmallSplitFromCustomRoot) {
  TempDir dir;
  writeSplit(dir, "t10k", {3, 2, 4}, {0, 9, 5});
  const ImageSet set = FashionMnist::load(dir.path().string(), false);
  EXPECT_EQ(set.count, 3);
  EXPECT_EQ(set.rows, 2);
  EXPECT_EQ(set.cols, 4);
  EXPECT_EQ(set.pixels, test::iota(24));
  EXPECT_EQ(set.labels, (Bytes{0, 9, 5}));
}

TEST(FashionMnist, AcceptsUncompressedFiles) {
  TempDir dir;
  test::writePlain(dir.file("train-images-idx3-ubyte"), idxBytes({1, 2, 2}, test::iota(4)));
  test::writePlain(dir.file("train-labels-idx1-ubyte"), idxBytes({1}, {3}));
  const ImageSet set = FashionMnist::load(dir.path().string(), true);
  EXPECT_EQ(set.count, 1);
  EXPECT_EQ(set.labels, (Bytes{3}));
}

TEST(FashionMnist, RejectsImagesWithWrongDimensionCount) {
  TempDir dir;
  writeSplit(dir, "train", {3, 16}, {0, 1, 2});
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-images-idx3-ubyte.gz"), "expected 3", kAptHint});
}

TEST(FashionMnist, RejectsLabelsWithWrongDimensionCount) {
  TempDir dir;
  writeSplit(dir, "train", {2, 2, 2}, {});
  test::writeGz(dir.file("train-labels-idx1-ubyte.gz"), idxBytes({2, 1}, {0, 1}));
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-labels-idx1-ubyte.gz"), "expected 1", kAptHint});
}

TEST(FashionMnist, RejectsMismatchedCounts) {
  TempDir dir;
  writeSplit(dir, "train", {3, 2, 2}, {0, 1});
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-images-idx3-ubyte.gz"), "3 images", "2 labels", kAptHint});
}

TEST(FashionMnist, RejectsLabelOutOfRange) {
  TempDir dir;
  writeSplit(dir, "train", {3, 2, 2}, {0, 10, 1});
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-labels-idx1-ubyte.gz"), "label 10 at index 1", kAptHint});
}

TEST(FashionMnist, CorruptFileNamesFileAndInstallCommand) {
  TempDir dir;
  writeSplit(dir, "train", {3, 2, 2}, {0, 1, 2});
  test::writeText(dir.file("train-images-idx3-ubyte.gz"), "garbage");
  expectDataError([&] { FashionMnist::load(dir.path().string(), true); },
                  {dir.file("train-images-idx3-ubyte.gz"), "magic", kAptHint});
}

TEST(FashionMnist, ClassNames) {
  EXPECT_EQ(FashionMnist::className(0), "T-shirt/top");
  EXPECT_EQ(FashionMnist::className(9), "Ankle boot");
  expectDataError([] { FashionMnist::className(10); }, {"10"});
  expectDataError([] { FashionMnist::className(-1); }, {"-1"});
}

}  // namespace
}  // namespace ps::data
