#include "engine/data/IdxReader.h"

#include "DataTestUtil.h"
#include "tests/engine/MemoryLimit.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace ps::data {
namespace {

using test::Bytes;
using test::expectDataError;
using test::idxBytes;
using test::TempDir;

TEST(IdxReader, ReadsPlainFile) {
  TempDir dir;
  const std::string path = dir.file("plain-idx2");
  test::writePlain(path, idxBytes({2, 3}, test::iota(6)));
  EXPECT_FALSE(isGzipFile(path));
  const IdxArray a = readIdx(path);
  EXPECT_EQ(a.dims, (std::vector<int>{2, 3}));
  EXPECT_EQ(a.data, test::iota(6));
  EXPECT_EQ(a.elementCount(), 6u);
}

TEST(IdxReader, ReadsGzipFileWithFourDims) {
  TempDir dir;
  const std::string path = dir.file("four-dims.gz");
  test::writeGz(path, idxBytes({2, 3, 4, 5}, test::iota(120)));
  EXPECT_TRUE(isGzipFile(path));
  const IdxArray a = readIdx(path);
  EXPECT_EQ(a.dims, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(a.data, test::iota(120));
}

TEST(IdxReader, ReadsLargeDimensionValuesBigEndian) {
  TempDir dir;
  const std::string path = dir.file("big.gz");
  test::writeGz(path, idxBytes({70000}, test::iota(70000)));
  const IdxArray a = readIdx(path);
  ASSERT_EQ(a.dims, (std::vector<int>{70000}));
  EXPECT_EQ(a.data.size(), 70000u);
  EXPECT_EQ(a.data.back(), test::iota(70000).back());
}

TEST(IdxReader, RejectsMissingFile) {
  TempDir dir;
  const std::string path = dir.file("nope-idx1-ubyte.gz");
  expectDataError([&] { readIdx(path); }, {path, "not found"});
}

TEST(IdxReader, MissingSystemFileSuggestsAptInstall) {
  const std::string path = "/usr/share/datasets/fashion-mnist/no-such-file-idx1-ubyte.gz";
  expectDataError([&] { readIdx(path); }, {path, "sudo apt-get install dataset-fashion-mnist", "./setup.sh"});
}

TEST(IdxReader, CustomHintReplacesDefaultAdvice) {
  TempDir dir;
  const std::string path = dir.file("missing.gz");
  try {
    readIdx(path, "download it again");
    ADD_FAILURE() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), "IDX file '" + path + "': file not found; download it again");
  }
}

TEST(IdxReader, RejectsDirectory) {
  TempDir dir;
  expectDataError([&] { readIdx(dir.path().string()); }, {dir.path().string(), "directory"});
}

TEST(IdxReader, RejectsEmptyFile) {
  TempDir dir;
  const std::string plain = dir.file("empty");
  test::writePlain(plain, {});
  expectDataError([&] { readIdx(plain); }, {plain, "empty"});
  const std::string gz = dir.file("empty.gz");
  test::writeGz(gz, {});
  expectDataError([&] { readIdx(gz); }, {gz, "empty"});
}

TEST(IdxReader, RejectsBadMagic) {
  TempDir dir;
  const std::string path = dir.file("bad-magic.gz");
  Bytes bytes = idxBytes({4}, test::iota(4));
  bytes[0] = 0x12;
  test::writeGz(path, bytes);
  expectDataError([&] { readIdx(path); }, {path, "magic"});
}

TEST(IdxReader, RejectsUnsupportedElementType) {
  TempDir dir;
  const std::string path = dir.file("floats.gz");
  test::writeGz(path, idxBytes({4}, test::iota(16), 0x0D));
  expectDataError([&] { readIdx(path); }, {path, "0x0d", "unsigned byte"});
}

TEST(IdxReader, RejectsWrongDimensionCount) {
  TempDir dir;
  const std::string zero = dir.file("zero-dims.gz");
  test::writeGz(zero, idxBytes({}, {}));
  expectDataError([&] { readIdx(zero); }, {zero, "number of dimensions 0"});
  const std::string five = dir.file("five-dims.gz");
  test::writeGz(five, idxBytes({1, 1, 1, 1, 1}, {7}));
  expectDataError([&] { readIdx(five); }, {five, "number of dimensions 5"});
}

TEST(IdxReader, RejectsZeroDimension) {
  TempDir dir;
  const std::string path = dir.file("zero-dim.gz");
  test::writeGz(path, idxBytes({3, 0}, {}));
  expectDataError([&] { readIdx(path); }, {path, "dimension 1 is 0"});
}

TEST(IdxReader, RejectsAbsurdSize) {
  TempDir dir;
  const std::string path = dir.file("absurd.gz");
  test::writeGz(path, idxBytes({65536, 65536}, {}));
  expectDataError([&] { readIdx(path); }, {path, "absurd"});
  // A quarter of a gigabyte is the most a header may declare: a small gzip cannot inflate to gigabytes.
  test::writeGz(path, idxBytes({16384, 16384}, {}));
  expectDataError([&] { readIdx(path); }, {path, "absurd", "2^28"});
}

TEST(IdxReader, RejectsTruncatedHeader) {
  TempDir dir;
  const std::string path = dir.file("short-header.gz");
  Bytes bytes = idxBytes({10, 10}, {});
  bytes.resize(6);
  test::writeGz(path, bytes);
  expectDataError([&] { readIdx(path); }, {path, "truncated"});
}

TEST(IdxReader, RejectsTruncatedData) {
  TempDir dir;
  const std::string path = dir.file("truncated.gz");
  test::writeGz(path, idxBytes({10, 10}, test::iota(99)));
  expectDataError([&] { readIdx(path); }, {path, "truncated", "100", "99"});
}

TEST(IdxReader, RejectsCutOffGzipStream) {
  TempDir dir;
  const std::string full = dir.file("full.gz");
  test::writeGz(full, idxBytes({100, 100}, Bytes(10000, 0)));
  Bytes gz = test::readAll(full);
  ASSERT_GT(gz.size(), 20u);
  gz.resize(gz.size() / 2);
  const std::string cut = dir.file("cut.gz");
  test::writePlain(cut, gz);
  expectDataError([&] { readIdx(cut); }, {cut, "truncated"});
}

TEST(IdxReader, RejectsCorruptGzipChecksum) {
  TempDir dir;
  const std::string path = dir.file("bad-crc.gz");
  test::writeGz(path, idxBytes({2, 2}, test::iota(4)));
  Bytes gz = test::readAll(path);
  gz[gz.size() - 8] ^= 0xff;  // first byte of the CRC-32 trailer
  test::writePlain(path, gz);
  expectDataError([&] { readIdx(path); }, {path, "corrupt"});
}

TEST(IdxReader, RejectsTrailingGarbage) {
  TempDir dir;
  const std::string path = dir.file("trailing.gz");
  Bytes bytes = idxBytes({2, 2}, test::iota(4));
  bytes.insert(bytes.end(), {1, 2, 3});
  test::writeGz(path, bytes);
  expectDataError([&] { readIdx(path); }, {path, "3 trailing bytes"});
  const std::string plain = dir.file("trailing-plain");
  test::writePlain(plain, bytes);
  expectDataError([&] { readIdx(plain); }, {plain, "trailing"});
}

TEST(IdxReader, RejectsNonGzipGarbage) {
  TempDir dir;
  const std::string path = dir.file("garbage.gz");
  test::writeText(path, "<html>404 Not Found</html>\n");
  expectDataError([&] { readIdx(path); }, {path, "not an IDX file", "not gzip"});
}

}  // namespace
}  // namespace ps::data

namespace ps::data {
namespace {

// A 16-byte file whose header declares two billion elements allocated 2.2 GB before noticing it is truncated; the
// data now grows with what the file holds, so the read fails as truncated within a 256 MiB allowance.
TEST(IdxReader, AHugeDeclaredSizeIsFoundTruncatedWithoutAllocatingIt) {
  TempDir dir;
  for (const bool gz : {false, true}) {
    const std::string path = dir.file(gz ? "bomb.gz" : "bomb");
    const Bytes bytes = {0, 0, 8, 3, 0, 0, 0x03, 0xE8, 0, 0, 0x03, 0xE8, 0, 0, 0x00, 0xC8};  // 1000 x 1000 x 200
    gz ? test::writeGz(path, bytes) : test::writePlain(path, bytes);
    EXPECT_EXIT(
        {
          ps::test::limitMemoryGrowth(std::uint64_t(64) << 20);  // far less than the 200 MB declared
          try {
            readIdx(path);
          } catch (const DataError& e) {
            std::_Exit(std::string(e.what()).find("truncated") != std::string::npos ? 0 : 3);
          } catch (const std::bad_alloc&) {
            std::_Exit(4);  // it tried to allocate what the header declared
          }
          std::_Exit(5);
        },
        ::testing::ExitedWithCode(0), "");
  }
}

}  // namespace
}  // namespace ps::data
