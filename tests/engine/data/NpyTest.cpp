// NumPy .npy files: what np.save writes reads back exactly; damaged or foreign files are refused by name before any
// allocation their header asks for.
#include "engine/data/Npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

namespace ps {
namespace {

namespace fs = std::filesystem;

std::string tempPath(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("pipesqueeze-npy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// A .npy file as NumPy lays it out, with any header text and payload.
std::string handMade(const std::string& name, const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t lead = major == 1 ? 10 : 12;
  header.append((64 - (lead + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += char(major);
  bytes += char(0);
  bytes += char(header.size() & 0xff);
  bytes += char((header.size() >> 8) & 0xff);
  if (major != 1) bytes += std::string(2, '\0');
  const std::string path = tempPath(name);
  std::ofstream(path, std::ios::binary) << bytes << header << data;
  return path;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * 4);
}

TEST(Npy, RoundTripsEveryShape) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{}, {5}, {2, 3, 4}, {0, 3}}) {
    NpyArray a;
    a.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    for (int64_t i = 0; i < n; ++i) a.values.push_back(float(i) * 0.5f - 1.f);
    const std::string path = tempPath("round.npy");
    writeNpy(path, a);
    const NpyArray b = readNpy(path);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.values, a.values);
    EXPECT_EQ((fs::file_size(path) - uint64_t(n) * 4) % 64, 0u);  // the data starts 64-byte aligned, as in NumPy
  }
}

TEST(Npy, ReadsWhatNumpyWritesIncludingFloat64AndVersion2) {
  auto a =
      readNpy(handMade("v1.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", floats({1, 2, 3, 4})));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.values, (std::vector<float>{1, 2, 3, 4}));
  const double wide[3] = {0.5, -2, 1e-3};
  auto b = readNpy(handMade("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                            std::string(reinterpret_cast<const char*>(wide), sizeof wide)));
  EXPECT_EQ(b.values, (std::vector<float>{0.5f, -2.f, 1e-3f}));
  auto c = readNpy(handMade("v2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({7}), 2));
  EXPECT_TRUE(c.shape.empty());
  EXPECT_EQ(c.values, std::vector<float>{7});
}

TEST(Npy, RefusesDamagedAndForeignFilesNamingThem) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  struct Case {
    std::string name, dict, data, says;
  };
  const std::vector<Case> cases = {
      {"big-endian.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2}), "dtype"},
      {"int.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2}), "dtype"},
      {"fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", floats({1, 2}), "Fortran"},
      {"short.npy", ok, floats({1}), "the shape needs 8"},
      {"long.npy", ok, floats({1, 2, 3}), "the shape needs 8"},
      // Declares 2^40 elements in a file of a few bytes: refused before anything is allocated.
      {"huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", floats({1}), "2^31"},
      {"negative.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", floats({1, 2}), "non-negative"},
      {"noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", floats({1, 2}), "'shape'"},
  };
  for (const auto& c : cases) {
    const std::string path = handMade(c.name, c.dict, c.data);
    try {
      readNpy(path);
      ADD_FAILURE() << c.name << " was accepted";
    } catch (const NpyError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(c.says), std::string::npos) << what;
    }
  }
  const std::string garbage = tempPath("garbage.npy");
  std::ofstream(garbage) << "not an array";
  EXPECT_THROW(readNpy(garbage), NpyError);
  EXPECT_THROW(readNpy(tempPath("missing.npy")), NpyError);
  // A header length past the end of the file.
  const std::string cut = tempPath("cut.npy");
  std::ofstream(cut, std::ios::binary) << std::string("\x93NUMPY\x01\x00\xff\x7f", 10) << "{'descr'";
  EXPECT_THROW(readNpy(cut), NpyError);
}

}  // namespace
}  // namespace ps
