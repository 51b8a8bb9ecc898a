#pragma once
// The bytes that cross a link. Every payload starts with a small header so the receiver can check what it got
// before touching the body: payloads from another process are untrusted input.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class PayloadError : public std::runtime_error {
 public:
  explicit PayloadError(const std::string& what) : std::runtime_error("malformed payload: " + what) {}
};

enum class CodecId : uint8_t { Identity = 1 };

struct PayloadHeader {
  static constexpr uint8_t kMagic[4] = {'P', 'S', 'Q', 'Z'};
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kMaxDims = 8;
  static constexpr int64_t kMaxElements = int64_t(1) << 34;

  CodecId codec = CodecId::Identity;
  std::vector<int64_t> shape;

  int64_t numel() const;
  size_t encodedSize() const { return 8 + 8 * shape.size(); }
  void writeTo(std::vector<uint8_t>& out) const;  // appends
  // Parses and validates; returns the offset of the body.
  static PayloadHeader read(const std::vector<uint8_t>& bytes, size_t& offset);
};

struct Payload {
  std::vector<uint8_t> bytes;
  size_t size() const { return bytes.size(); }
};

}  // namespace ps
