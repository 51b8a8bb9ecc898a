// The compressed gradient exchange's wire message: what a replica writes reads back, and every malformed message
// from a peer is refused with what is wrong, before anything it declares sizes an allocation.
#include "engine/pipeline/GradientMessage.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace ps {
namespace {

std::vector<uint8_t> twoTensors() {
  GradientMessageWriter w;
  w.add({1, 2, 3});
  w.add({});
  return w.finish(2.5);
}

std::string refusal(const std::vector<uint8_t>& bytes, uint32_t expected) {
  try {
    GradientMessage::parse(bytes, expected);
  } catch (const GradientMessageError& e) {
    return e.what();
  }
  return "";
}

TEST(GradientMessage, WhatIsWrittenParsesBack) {
  const auto bytes = twoTensors();
  EXPECT_EQ(bytes.size(), GradientMessage::kHeaderBytes + 8 + 3 + 8);
  const auto m = GradientMessage::parse(bytes, 2);
  EXPECT_EQ(m.clock, 2.5);
  ASSERT_EQ(m.tensors.size(), 2u);
  EXPECT_EQ(std::vector<uint8_t>(m.tensors[0].data, m.tensors[0].data + m.tensors[0].size),
            (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(m.tensors[1].size, 0u);
  GradientMessageWriter reused;  // a writer starts over after finish()
  reused.add({9});
  reused.finish(0);
  EXPECT_EQ(reused.finish(1).size(), GradientMessage::kHeaderBytes);
}

TEST(GradientMessage, MalformedMessagesAreRefusedSayingWhy) {
  const auto good = twoTensors();
  EXPECT_NE(refusal({1, 2, 3}, 2).find("3 bytes, shorter than its 12-byte header"), std::string::npos);
  EXPECT_NE(refusal(good, 3).find("2 tensors where 3 were expected"), std::string::npos);

  auto truncated = good;
  truncated.pop_back();
  EXPECT_NE(refusal(truncated, 2).find("tensor 1 runs past the end"), std::string::npos) << refusal(truncated, 2);

  auto trailing = good;
  trailing.push_back(0);
  EXPECT_NE(refusal(trailing, 2).find("1 trailing bytes"), std::string::npos);

  auto huge = good;  // the first tensor's length set to 2^64 - 1: no wrap-around, no read past the end
  const uint64_t all = std::numeric_limits<uint64_t>::max();
  std::memcpy(huge.data() + GradientMessage::kHeaderBytes, &all, 8);
  EXPECT_NE(refusal(huge, 2).find("tensor 0 declares 18446744073709551615 bytes"), std::string::npos)
      << refusal(huge, 2);

  // A count of 4 billion tensors in 12 bytes: refused before reserving 4 billion spans.
  std::vector<uint8_t> many(GradientMessage::kHeaderBytes, 0);
  const uint32_t count = std::numeric_limits<uint32_t>::max();
  std::memcpy(many.data() + 8, &count, 4);
  EXPECT_NE(refusal(many, count).find("cannot fit in 12 bytes"), std::string::npos) << refusal(many, count);
}

}  // namespace
}  // namespace ps
