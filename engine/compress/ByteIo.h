#pragma once
// Little-endian writing and bounds-checked reading of payload bodies. Every read checks the remaining
// length, so a decoder fed hostile bytes throws PayloadError instead of reading past the end.
#include "engine/compress/Payload.h"

#include <cstring>
#include <type_traits>

namespace ps {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  // Reserves `bytes` and returns where to write them.
  uint8_t* grow(size_t bytes) {
    const size_t at = out_.size();
    out_.resize(at + bytes);
    return out_.data() + at;
  }

 private:
  std::vector<uint8_t>& out_;
};

class ByteReader {
 public:
  ByteReader(const std::vector<uint8_t>& in, size_t offset) : data_(in.data()), size_(in.size()), at_(offset) {}
  template <typename T>
  T get(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what), sizeof(T));
    return v;
  }
  const uint8_t* take(size_t bytes, const char* what) {
    if (bytes > size_ - at_) throw PayloadError(std::string(what) + " runs past the end of the payload");
    const uint8_t* p = data_ + at_;
    at_ += bytes;
    return p;
  }
  size_t remaining() const { return size_ - at_; }
  // The next byte, not consumed.
  uint8_t peek(const char* what) const {
    if (at_ >= size_) throw PayloadError(std::string(what) + " runs past the end of the payload");
    return data_[at_];
  }
  size_t offset() const { return at_; }
  void expectEnd() const {
    if (at_ != size_) throw PayloadError(std::to_string(size_ - at_) + " trailing bytes after the body");
  }

 private:
  const uint8_t* data_;
  size_t size_, at_;
};

}  // namespace ps
