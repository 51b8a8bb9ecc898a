#include "engine/data/IdxReader.h"

#include "engine/data/DataError.h"
#include "engine/data/InstallHints.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

namespace ps::data {
namespace fs = std::filesystem;

namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr int kMaxDims = 4;
// Exclusive bound on what a header may declare: 256 MiB of bytes, five times Fashion-MNIST's training images, so a
// small gzip that inflates a thousandfold cannot make the reader take gigabytes.
constexpr uint64_t kMaxElements = uint64_t{1} << 28;

bool isUnder(const std::string& path, const char* root) {
  std::error_code ec;
  const fs::path abs = fs::absolute(fs::path(path), ec);
  if (ec) return false;
  const fs::path rel = abs.lexically_normal().lexically_relative(fs::path(root).lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

std::string defaultFixHint(const std::string& path) {
  if (isUnder(path, kFashionMnistSystemRoot)) return kFashionMnistInstallHint;
  return "check the path, or replace the file with an intact copy of the IDX file";
}

// The file being read and the advice appended to every error about it.
struct Source {
  const std::string& path;
  const std::string& hint;

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError("IDX file '" + path + "': " + what + "; " + hint);
  }
};

std::string hexBytes(const uint8_t* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ' ';
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 0x0f];
  }
  return out;
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to `n` bytes; returns how many were read. Throws on a corrupt or
// cut-off gzip stream (those are reported through gzerror, not the count).
std::size_t readSome(gzFile file, uint8_t* dst, std::size_t n, const Source& src) {
  std::size_t total = 0;
  while (total < n) {
    const std::size_t want = std::min<std::size_t>(n - total, std::size_t{1} << 30);
    const int got = gzread(file, dst + total, static_cast<unsigned>(want));
    if (got <= 0) break;
    total += static_cast<std::size_t>(got);
  }
  int err = Z_OK;
  const char* msg = gzerror(file, &err);
  if (err == Z_BUF_ERROR) src.fail("truncated: the gzip stream ends unexpectedly");
  if (err != Z_OK) src.fail(std::string("corrupt gzip data (") + (msg ? msg : "unknown zlib error") + ")");
  return total;
}

std::string describeKind(bool gz) {
  return gz ? "gzip-compressed" : "plain (not gzip-compressed)";
}

// Opens the file (gzip or plain) after checking it is there and is a file.
GzHandle openIdx(const Source& src) {
  std::error_code ec;
  const auto status = fs::status(src.path, ec);
  if (!fs::exists(status)) src.fail("file not found");
  if (fs::is_directory(status)) src.fail("is a directory, expected a file");
  errno = 0;
  GzHandle file(gzopen(src.path.c_str(), "rb"));
  if (!file) {
    const int e = errno;
    src.fail(std::string("cannot open for reading (") + (e ? std::strerror(e) : "out of memory") + ")");
  }
  gzbuffer(file.get(), 1u << 17);
  return file;
}

// The magic bytes and the dimension sizes, each checked before the next is read: at most kMaxDims dimensions, none
// zero, fewer than kMaxElements elements in all.
std::vector<int> readHeader(gzFile file, bool gz, const Source& src) {
  std::array<uint8_t, 4> magic{};
  const std::size_t gotMagic = readSome(file, magic.data(), magic.size(), src);
  if (gotMagic == 0) src.fail("file is empty (" + describeKind(gz) + ")");
  if (gotMagic < magic.size())
    src.fail("truncated: only " + std::to_string(gotMagic) + " bytes, too short for the 4-byte IDX header");
  if (magic[0] != 0 || magic[1] != 0)
    src.fail("not an IDX file: bad magic bytes " + hexBytes(magic.data(), 4) + " (expected 00 00 08 0N; file is " +
             describeKind(gz) + ")");
  if (magic[2] != kUnsignedByteType)
    src.fail("unsupported IDX element type 0x" + hexBytes(&magic[2], 1) + " (only 0x08, unsigned byte, is supported)");
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxDims)
    src.fail("wrong number of dimensions " + std::to_string(ndims) + " in the IDX header (expected 1 to " +
             std::to_string(kMaxDims) + ")");

  std::vector<uint8_t> dimBytes(static_cast<std::size_t>(ndims) * 4);
  if (readSome(file, dimBytes.data(), dimBytes.size(), src) < dimBytes.size())
    src.fail("truncated: the header declares " + std::to_string(ndims) +
             " dimensions but the file ends inside the dimension sizes");
  std::vector<int> dims;
  uint64_t elements = 1;
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* b = &dimBytes[static_cast<std::size_t>(i) * 4];
    const uint64_t d = (uint64_t{b[0]} << 24) | (uint64_t{b[1]} << 16) | (uint64_t{b[2]} << 8) | uint64_t{b[3]};
    if (d == 0) src.fail("dimension " + std::to_string(i) + " is 0 (every dimension must be positive)");
    elements *= d;  // cannot overflow: elements < 2^28 and d < 2^32 before each check
    if (elements >= kMaxElements)
      src.fail("header declares an absurd size (dimension " + std::to_string(i) + " = " + std::to_string(d) +
               " brings the element count to at least 2^28, the most the lab reads)");
    dims.push_back(static_cast<int>(d));
  }
  return dims;
}

// The `elements` data bytes. The buffer grows with what the file really holds, a chunk at a time: a 16-byte file
// whose header declares two billion elements is found truncated without allocating for them first.
void readData(gzFile file, uint64_t elements, std::vector<uint8_t>& data, const Source& src) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (data.size() < elements) {
    const std::size_t at = data.size();
    const std::size_t want = std::min<std::size_t>(kChunk, static_cast<std::size_t>(elements) - at);
    data.resize(at + want);
    const std::size_t got = readSome(file, data.data() + at, want, src);
    data.resize(at + got);
    if (got < want) break;
  }
  if (data.size() < elements) {
    std::ostringstream msg;
    msg << "truncated: the header declares " << elements << " data bytes but the file holds only " << data.size();
    src.fail(msg.str());
  }
}

}  // namespace

std::size_t IdxArray::elementCount() const {
  if (dims.empty()) return 0;
  std::size_t n = 1;
  for (int d : dims) n *= static_cast<std::size_t>(d);
  return n;
}

bool isGzipFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 2> magic{};
  if (!in.read(magic.data(), 2)) return false;
  return static_cast<uint8_t>(magic[0]) == 0x1f && static_cast<uint8_t>(magic[1]) == 0x8b;
}

IdxArray readIdx(const std::string& path) {
  return readIdx(path, defaultFixHint(path));
}

IdxArray readIdx(const std::string& path, const std::string& fixHint) {
  const Source src{path, fixHint};
  const GzHandle file = openIdx(src);
  const bool gz = isGzipFile(path);
  IdxArray out;
  out.dims = readHeader(file.get(), gz, src);
  const uint64_t elements = out.elementCount();
  readData(file.get(), elements, out.data, src);

  std::array<uint8_t, 1 << 16> scratch{};
  std::size_t trailing = 0;
  for (std::size_t n; (n = readSome(file.get(), scratch.data(), scratch.size(), src)) > 0;) trailing += n;
  if (trailing > 0)
    src.fail(std::to_string(trailing) + " trailing bytes after the " + std::to_string(elements) +
             " data bytes the header declares (wrong header or concatenated files?)");
  return out;
}

}  // namespace ps::data
