// Point-to-point framing between ranks: the header is checked before anything else, and a body grows only as its
// chunks arrive (a peer announcing 16 GiB and sending 32 bytes costs one chunk).
#include "engine/dist/Framing.h"
#include "tests/engine/MemoryLimit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace ps {
namespace {

TEST(Framing, HeaderIsCheckedForMagicReservedAndLimit) {
  WireHeader h;
  h.bytes = 100;
  std::vector<uint8_t> raw(sizeof h);
  std::memcpy(raw.data(), &h, sizeof h);
  EXPECT_EQ(parseHeader(raw.data(), raw.size(), 100).bytes, 100u);
  EXPECT_THROW(parseHeader(raw.data(), raw.size(), 99), FrameError);
  EXPECT_THROW(parseHeader(raw.data(), 31, 1000), FrameError);
  raw[0] ^= 1;
  EXPECT_THROW(parseHeader(raw.data(), raw.size(), 1000), FrameError);
  raw[0] ^= 1;
  raw[5] = 1;  // reserved
  try {
    parseHeader(raw.data(), raw.size(), 1000);
    ADD_FAILURE() << "accepted a header with reserved bits set";
  } catch (const FrameError& e) {
    EXPECT_NE(std::string(e.what()).find("bad header"), std::string::npos) << e.what();
  }
}

TEST(Framing, ChunksCoverTheBodyInOrder) {
  EXPECT_TRUE(chunksOf(0).empty());
  const auto chunks = chunksOf(2 * kChunkBytes + 5);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], std::make_pair(uint64_t(0), size_t(kChunkBytes)));
  EXPECT_EQ(chunks[2], std::make_pair(2 * kChunkBytes, size_t(5)));
  // Reassembly: every byte lands where the sender had it.
  std::vector<uint8_t> sent(size_t(kChunkBytes + 7));
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = uint8_t(i * 31);
  size_t at = 0;
  auto got = receiveChunked(sent.size(), [&](uint8_t* into, size_t size) {
    std::memcpy(into, sent.data() + at, size);
    at += size;
  });
  EXPECT_EQ(got, sent);
}

// A peer announces the largest message a rank accepts (16 GiB) and then sends nothing: the receiver must fail
// with the peer's error having allocated one chunk, not zero-filled 16 GiB. Under a 256 MiB address-space cap an
// up-front allocation ends in bad_alloc instead.
TEST(Framing, AnAnnouncedBodyIsNotAllocatedBeforeItArrives) {
  EXPECT_EXIT(
      {
        test::limitMemoryGrowth(uint64_t(256) << 20);
        try {
          receiveChunked(uint64_t(1) << 34, [](uint8_t*, size_t) { throw std::runtime_error("peer closed"); });
        } catch (const std::bad_alloc&) {
          std::_Exit(2);
        } catch (const std::runtime_error& e) {  // _Exit: no exit handlers (LeakSanitizer's) in the forked child
          std::_Exit(std::string(e.what()) == "peer closed" ? 0 : 3);
        }
        std::_Exit(4);
      },
      testing::ExitedWithCode(0), "");
}

TEST(Framing, AGatheredListIsCheckedAsUntrusted) {
  const std::vector<std::vector<uint8_t>> parts{{1, 2}, {}, {3, 4, 5}};
  const auto list = packParts(parts);
  EXPECT_EQ(unpackParts(list, 3, 10), parts);
  auto refused = [](const std::vector<uint8_t>& bytes, size_t count, uint64_t limit) {
    try {
      unpackParts(bytes, count, limit);
    } catch (const FrameError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused(list, 4, 10).find("3 parts where 4 were expected"), std::string::npos);
  EXPECT_NE(refused(list, 3, 2).find("part 2 claims 3 bytes"), std::string::npos);
  EXPECT_NE(refused({list.begin(), list.end() - 1}, 3, 10).find("part 2 claims 3 bytes"), std::string::npos);
  auto longer = list;
  longer.push_back(0);
  EXPECT_NE(refused(longer, 3, 10).find("1 bytes left over"), std::string::npos);
  EXPECT_NE(refused({3, 0}, 3, 10).find("where 3 were expected"), std::string::npos);
  EXPECT_NE(refused({list.begin(), list.begin() + 12}, 3, 10).find("too few for their sizes"), std::string::npos);
  auto huge = list;
  const uint64_t lie = ~uint64_t(0);
  std::memcpy(huge.data() + 4, &lie, 8);
  EXPECT_NE(refused(huge, 3, ~uint64_t(0)).find("part 0 claims"), std::string::npos);
}

}  // namespace
}  // namespace ps
