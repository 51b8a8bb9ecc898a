#include "engine/data/Npy.h"
#include "engine/core/AtomicFile.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace ps {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMaxHeader = 1 << 16;  // NumPy writes a few hundred bytes
constexpr int64_t kMaxElements = int64_t(1) << 31;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw NpyError(path + ": " + what + " (expected a NumPy .npy file of float32 or float64, as np.save writes)");
}

// The value of `key` in the header's Python dict literal, up to the next top-level comma or the closing brace.
std::string field(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  const size_t at = header.find(quoted);
  if (at == std::string::npos) fail(path, "the header has no " + quoted);
  size_t i = header.find(':', at + quoted.size());
  if (i == std::string::npos) fail(path, "the header's " + quoted + " has no value");
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  const size_t start = i;
  int depth = 0;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  if (depth != 0) fail(path, "the header's " + quoted + " is not closed");
  return header.substr(start, i - start);
}

std::vector<int64_t> parseShape(const std::string& text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') fail(path, "the shape is not a tuple: " + text);
  std::vector<int64_t> shape;
  int64_t total = 1;
  std::string inner = text.substr(1, text.size() - 2);
  std::istringstream in(inner);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b == std::string::npos) continue;  // the trailing comma of a 1-tuple
    item = item.substr(b, e - b + 1);
    if (item.empty() || item.size() > 12 || item.find_first_not_of("0123456789") != std::string::npos)
      fail(path, "a dimension of the shape is not a non-negative integer: " + item);
    const int64_t d = std::stoll(item);
    if (d > kMaxElements || (d > 0 && total > kMaxElements / d)) fail(path, "the shape has more than 2^31 elements");
    total *= d;
    shape.push_back(d);
  }
  if (shape.size() > 8) fail(path, "more than 8 dimensions");
  return shape;
}

}  // namespace

NpyArray readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open the file; check the path");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  char lead[10] = {};
  if (size < 10 || !in.read(lead, 10) || std::memcmp(lead, kMagic, 6) != 0) fail(path, "no .npy magic");
  const int major = static_cast<unsigned char>(lead[6]);
  uint64_t headerLength = 0, offset = 10;
  if (major == 1) {
    headerLength = uint64_t(static_cast<unsigned char>(lead[8])) | uint64_t(static_cast<unsigned char>(lead[9])) << 8;
  } else if (major == 2 || major == 3) {
    char more[2];
    if (!in.read(more, 2)) fail(path, "truncated header");
    headerLength = uint64_t(static_cast<unsigned char>(lead[8])) | uint64_t(static_cast<unsigned char>(lead[9])) << 8 |
                   uint64_t(static_cast<unsigned char>(more[0])) << 16 |
                   uint64_t(static_cast<unsigned char>(more[1])) << 24;
    offset = 12;
  } else {
    fail(path, "format version " + std::to_string(major) + " is unknown");
  }
  if (headerLength > kMaxHeader || offset + headerLength > size)
    fail(path, "the header is longer than the file allows");
  std::string header(headerLength, '\0');
  if (!in.read(header.data(), std::streamsize(headerLength))) fail(path, "truncated header");
  const std::string descr = field(header, "descr", path);
  const bool f32 = descr == "'<f4'" || descr == "'=f4'" || descr == "'f4'";
  const bool f64 = descr == "'<f8'" || descr == "'=f8'" || descr == "'f8'";
  if (!f32 && !f64) fail(path, "dtype " + descr + " is not little-endian float32 or float64");
  if (field(header, "fortran_order", path) != "False")
    fail(path, "Fortran order is not supported; save a C-order array");
  NpyArray a;
  a.shape = parseShape(field(header, "shape", path), path);
  uint64_t count = 1;
  for (int64_t d : a.shape) count *= uint64_t(d);
  const uint64_t width = f32 ? 4 : 8;
  if (size - offset - headerLength != count * width)
    fail(path, "the data has " + std::to_string(size - offset - headerLength) + " bytes, the shape needs " +
                   std::to_string(count * width));
  a.values.resize(count);
  if (f32) {
    if (count && !in.read(reinterpret_cast<char*>(a.values.data()), std::streamsize(count * 4)))
      fail(path, "truncated data");
  } else {
    std::vector<double> wide(count);
    if (count && !in.read(reinterpret_cast<char*>(wide.data()), std::streamsize(count * 8)))
      fail(path, "truncated data");
    for (uint64_t i = 0; i < count; ++i) a.values[i] = float(wide[i]);
  }
  return a;
}

void writeNpy(const std::string& path, const NpyArray& a) {
  uint64_t count = 1;
  for (int64_t d : a.shape) count *= uint64_t(d);
  if (count != a.values.size())
    throw NpyError(path + ": the shape needs " + std::to_string(count) + " values, the array has " +
                   std::to_string(a.values.size()));
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');  // the data starts 64-byte aligned, as NumPy writes it
  header += '\n';
  AtomicFile file(path);  // a file replaced whole; a pipe or device written through; a link to a file refused
  std::ostream& out = file.stream();
  const uint16_t length = uint16_t(header.size());
  out.write(kMagic, 6);
  out.put(char(1));
  out.put(char(0));
  out.put(char(length & 0xff));
  out.put(char(length >> 8));
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(a.values.data()), std::streamsize(a.values.size() * 4));
  try {
    file.commit();
  } catch (const std::runtime_error& e) {
    throw NpyError(e.what());
  }
}

}  // namespace ps
