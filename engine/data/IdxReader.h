#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ps::data {

// An IDX array of unsigned bytes (the format of MNIST / Fashion-MNIST).
// `data` holds the elements in row-major order; its size is the product of `dims`.
struct IdxArray {
  std::vector<int> dims;
  std::vector<uint8_t> data;

  // Number of elements (product of dims; 0 for an empty array).
  std::size_t elementCount() const;
};

// Reads a gzip-compressed or plain IDX file (zlib reads both transparently).
// Only element type 0x08 (unsigned byte) with 1..4 dimensions is supported.
// Throws DataError naming `path` and a fix when the file is missing, unreadable,
// corrupt, truncated, or has trailing bytes.
// Files under /usr/share/datasets/fashion-mnist get the apt-get install advice.
IdxArray readIdx(const std::string& path);

// Same, with `fixHint` (e.g. "install it with: ...") appended to every error
// message instead of the default advice.
IdxArray readIdx(const std::string& path, const std::string& fixHint);

// True when the file starts with the gzip magic bytes 1f 8b.
bool isGzipFile(const std::string& path);

}  // namespace ps::data
