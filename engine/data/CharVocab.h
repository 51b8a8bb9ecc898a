#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ps::data {

// Byte-level character vocabulary. Id 0 is reserved for bytes not in the
// vocabulary; the known bytes get ids 1..n in ascending byte order, so the
// same texts always give the same ids.
class CharVocab {
 public:
  static constexpr int32_t kUnknownId = 0;
  static constexpr char kUnknownChar = '?';  // what decode() writes for id 0

  CharVocab();  // only the unknown id

  // Vocabulary of every byte occurring in `texts`.
  static CharVocab build(const std::vector<std::string>& texts);
  static CharVocab build(const std::string& text);

  // Vocabulary of exactly these bytes (duplicates are ignored).
  static CharVocab fromBytes(const std::vector<uint8_t>& bytes);

  // Number of ids including the unknown id 0.
  int size() const { return static_cast<int>(bytes_.size()) + 1; }

  bool contains(char c) const { return toId_[static_cast<unsigned char>(c)] != kUnknownId; }
  int32_t id(char c) const { return toId_[static_cast<unsigned char>(c)]; }

  // The known bytes, ascending; bytes()[i] has id i + 1.
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // Unknown bytes map to id 0.
  std::vector<int32_t> encode(const std::string& text) const;

  // Id 0 decodes to kUnknownChar; ids outside [0, size()) throw DataError.
  std::string decode(const std::vector<int32_t>& ids) const;

  // Compact ASCII form, e.g. "charvocab1:0a2041" (the sorted bytes in hex),
  // safe to store in JSON or a database text column.
  std::string serialize() const;

  // Inverse of serialize(); throws DataError on malformed input.
  static CharVocab deserialize(const std::string& text);

  bool operator==(const CharVocab& other) const { return bytes_ == other.bytes_; }
  bool operator!=(const CharVocab& other) const { return !(*this == other); }

 private:
  std::vector<uint8_t> bytes_;
  std::array<int32_t, 256> toId_{};
};

}  // namespace ps::data
