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
          std::exit(2);
        } catch (const std::runtime_error& e) {
          std::exit(std::string(e.what()) == "peer closed" ? 0 : 3);
        }
        std::exit(4);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ps
