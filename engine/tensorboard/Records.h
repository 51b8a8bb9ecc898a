#pragma once
// TensorFlow's record framing, which TensorBoard's event files use: each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes | data | uint32 masked CRC-32C of data
// with mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8. No protobuf here: the bytes of each record are opaque.
#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps::tensorboard {

class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

uint32_t crc32c(const void* data, size_t n);  // Castagnoli, as in iSCSI and TFRecord
uint32_t maskedCrc(const void* data, size_t n);

void writeRecord(std::ostream& out, const std::string& data);

// Every record of a stream, checked: a short header or body, a length above `limit` (checked before anything is
// allocated) or a CRC that does not match throws RecordError naming the record's index and byte offset.
std::vector<std::string> readRecords(std::istream& in, uint64_t limit = uint64_t(1) << 28);

}  // namespace ps::tensorboard
