#include "engine/tensorboard/Records.h"

#include <array>

namespace ps::tensorboard {
namespace {

const std::array<uint32_t, 256>& crcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected 0x1EDC6F41
      t[i] = c;
    }
    return t;
  }();
  return table;
}

void putLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xFF);
}

uint64_t getLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n) {
  const auto& t = crcTable();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t maskedCrc(const void* data, size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

void writeRecord(std::ostream& out, const std::string& data) {
  std::string header;
  putLe(header, data.size(), 8);
  putLe(header, maskedCrc(header.data(), 8), 4);
  std::string footer;
  putLe(footer, maskedCrc(data.data(), data.size()), 4);
  out << header << data << footer;
}

std::vector<std::string> readRecords(std::istream& in, uint64_t limit) {
  std::vector<std::string> records;
  uint64_t offset = 0;
  for (;;) {
    char header[12];
    in.read(header, sizeof header);
    const auto got = in.gcount();
    if (got == 0) return records;
    const std::string where = "record " + std::to_string(records.size()) + " at byte " + std::to_string(offset);
    if (got != sizeof header) throw RecordError(where + ": the file ends inside a record header (truncated)");
    if (uint32_t(getLe(header + 8, 4)) != maskedCrc(header, 8))
      throw RecordError(where + ": the length's CRC-32C does not match (not an event file, or damaged)");
    const uint64_t length = getLe(header, 8);
    if (length > limit)
      throw RecordError(where + ": a record of " + std::to_string(length) + " bytes is above the limit of " +
                        std::to_string(limit));
    std::string data(size_t(length), '\0');
    char footer[4];
    in.read(data.data(), std::streamsize(length));
    if (uint64_t(in.gcount()) != length || !in.read(footer, sizeof footer))
      throw RecordError(where + ": the file ends inside the record (truncated)");
    if (uint32_t(getLe(footer, 4)) != maskedCrc(data.data(), data.size()))
      throw RecordError(where + ": the data's CRC-32C does not match (damaged)");
    records.push_back(std::move(data));
    offset += sizeof header + length + sizeof footer;
  }
}

}  // namespace ps::tensorboard
