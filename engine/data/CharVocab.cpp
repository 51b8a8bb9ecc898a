#include "engine/data/CharVocab.h"

#include "engine/data/DataError.h"

#include <string_view>

namespace ps::data {

namespace {

constexpr std::string_view kPrefix = "charvocab1:";

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string preview(const std::string& text) {
  constexpr std::size_t kMax = 40;
  return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}

[[noreturn]] void badSerialized(const std::string& text, const std::string& why) {
  throw DataError("cannot read character vocabulary \"" + preview(text) + "\": " + why +
                  "; it must be the exact string CharVocab::serialize() produced (e.g. stored with the "
                  "pretrained model), so re-export it from the model that was trained with it");
}

}  // namespace

CharVocab::CharVocab() = default;

CharVocab CharVocab::fromBytes(const std::vector<uint8_t>& bytes) {
  std::array<bool, 256> seen{};
  for (uint8_t b : bytes) seen[b] = true;
  CharVocab vocab;
  for (std::size_t b = 0; b < seen.size(); ++b) {
    if (!seen[b]) continue;
    vocab.bytes_.push_back(static_cast<uint8_t>(b));
    vocab.toId_[b] = static_cast<int32_t>(vocab.bytes_.size());
  }
  return vocab;
}

CharVocab CharVocab::build(const std::vector<std::string>& texts) {
  std::array<bool, 256> seen{};
  for (const std::string& text : texts)
    for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::vector<uint8_t> bytes;
  for (std::size_t b = 0; b < seen.size(); ++b)
    if (seen[b]) bytes.push_back(static_cast<uint8_t>(b));
  return fromBytes(bytes);
}

CharVocab CharVocab::build(const std::string& text) {
  return build(std::vector<std::string>{text});
}

std::vector<int32_t> CharVocab::encode(const std::string& text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(id(c));
  return ids;
}

std::string CharVocab::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  text.reserve(ids.size());
  for (int32_t i : ids) {
    if (i == kUnknownId) {
      text += kUnknownChar;
    } else if (i > 0 && i < size()) {
      text += static_cast<char>(bytes_[static_cast<std::size_t>(i - 1)]);
    } else {
      throw DataError("token id " + std::to_string(i) + " is outside the character vocabulary (0.." +
                      std::to_string(size() - 1) + "); the ids come from a model with a different vocabulary");
    }
  }
  return text;
}

std::string CharVocab::serialize() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(kPrefix);
  out.reserve(kPrefix.size() + 2 * bytes_.size());
  for (uint8_t b : bytes_) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0x0f];
  }
  return out;
}

CharVocab CharVocab::deserialize(const std::string& text) {
  if (text.compare(0, kPrefix.size(), kPrefix) != 0)
    badSerialized(text, "it does not start with \"" + std::string(kPrefix) + "\"");
  const std::string_view hex = std::string_view(text).substr(kPrefix.size());
  if (hex.size() % 2 != 0) badSerialized(text, "odd number of hex digits");
  std::vector<uint8_t> bytes;
  bytes.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hexValue(hex[i]);
    const int lo = hexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) badSerialized(text, "invalid hex digit at position " + std::to_string(kPrefix.size() + i));
    const auto b = static_cast<uint8_t>(hi * 16 + lo);
    if (!bytes.empty() && b <= bytes.back())
      badSerialized(text, "bytes are not strictly ascending at position " + std::to_string(kPrefix.size() + i));
    bytes.push_back(b);
  }
  return fromBytes(bytes);
}

}  // namespace ps::data
