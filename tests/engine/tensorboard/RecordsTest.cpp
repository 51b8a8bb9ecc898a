// TensorFlow's record framing: the CRC-32C it uses, the masked CRCs, and a reader that checks every record.
#include "engine/tensorboard/Records.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ps::tensorboard {
namespace {

TEST(Records, Crc32cIsCastagnolis) {
  const std::string check = "123456789";  // the standard check value of CRC-32C
  EXPECT_EQ(crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  const uint32_t c = crc32c(check.data(), check.size());
  EXPECT_EQ(maskedCrc(check.data(), check.size()), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST(Records, WhatIsWrittenReadsBackRecordByRecord) {
  std::ostringstream out;
  const std::vector<std::string> records = {"first", "", std::string(70000, 'x'), std::string("\0\1\2", 3)};
  for (const auto& r : records) writeRecord(out, r);
  EXPECT_EQ(out.str().size(), 4 * 16 + 5 + 70000 + 3);
  std::istringstream in(out.str());
  EXPECT_EQ(readRecords(in), records);
}

void refused(std::string bytes, const std::string& says, uint64_t limit = uint64_t(1) << 28) {
  std::istringstream in(bytes);
  try {
    readRecords(in, limit);
    ADD_FAILURE() << "read without complaint; expected: " << says;
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Records, DamagedOrTruncatedStreamsAreRefusedNamingTheRecord) {
  std::ostringstream out;
  writeRecord(out, "alpha");
  writeRecord(out, "bravo");
  const std::string good = out.str();
  std::string flipped = good;
  flipped[good.size() - 8] ^= 0x20;  // a byte of the second record's data
  refused(flipped, "record 1 at byte 21: the data's CRC-32C does not match");
  std::string length = good;
  length[0] = 'A';  // the first record's length no longer matches its CRC
  refused(length, "record 0 at byte 0: the length's CRC-32C does not match");
  refused(good.substr(0, good.size() - 2), "record 1 at byte 21: the file ends inside the record");
  refused(good.substr(0, 25), "record 1 at byte 21: the file ends inside a record header");
  refused(good, "above the limit of 4", 4);
}

}  // namespace
}  // namespace ps::tensorboard
