#include "engine/compress/Codec.h"
#include "engine/compress/IdentityCodec.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

namespace ps {
namespace {

TEST(Payload, IdentityRoundTripIsExact) {
  auto identity = IdentityEntry::make({}, {});
  Codec& codec = *identity;
  for (auto shape : std::vector<std::vector<int64_t>>{{1}, {3, 5}, {2, 3, 4, 5}}) {
    auto x = torch::randn(shape);
    auto p = codec.encode(x);
    EXPECT_EQ(p.size(), 8 + 8 * shape.size() + 4 * size_t(x.numel()));
    EXPECT_TRUE(torch::equal(codec.decode(p, torch::kCPU), x));
  }
  // Non-contiguous and double input arrive as contiguous float32 of the same values.
  auto t = torch::randn({4, 6}, torch::kFloat64).t();
  EXPECT_TRUE(torch::allclose(codec.decode(codec.encode(t), torch::kCPU), t.to(torch::kFloat32)));
}

TEST(Payload, RejectsMalformedBytes) {
  auto identity = IdentityEntry::make({}, {});
  Codec& codec = *identity;
  const Payload good = codec.encode(torch::randn({2, 3}));
  auto rejects = [&](std::vector<uint8_t> bytes, const std::string& why) {
    try {
      codec.decode(Payload{std::move(bytes)}, torch::kCPU);
      ADD_FAILURE() << "accepted a payload with " << why;
    } catch (const PayloadError& e) {
      EXPECT_NE(std::string(e.what()).find("malformed payload"), std::string::npos);
    }
  };
  rejects({}, "no bytes");
  rejects({1, 2, 3}, "3 bytes");
  auto bytes = good.bytes;
  bytes[0] = 'X';
  rejects(bytes, "bad magic");
  bytes = good.bytes;
  bytes[4] = 99;
  rejects(bytes, "a future version");
  bytes = good.bytes;
  bytes[6] = 9;
  rejects(bytes, "too many dimensions");
  bytes = good.bytes;
  bytes[6] = 5;
  rejects(bytes, "a header longer than the payload");
  bytes = good.bytes;
  bytes.pop_back();
  rejects(bytes, "a truncated body");
  bytes = good.bytes;
  bytes.push_back(0);
  rejects(bytes, "trailing bytes");
  bytes = good.bytes;
  for (int i = 0; i < 8; ++i) bytes[8 + i] = 0xff;  // dimension 0 = 2^64 - 1
  rejects(bytes, "an impossible dimension");
  bytes = good.bytes;
  for (int i = 0; i < 8; ++i) bytes[8 + i] = 0;  // dimension 0 = 0
  rejects(bytes, "an empty dimension");
  bytes = good.bytes;
  bytes[5] = 77;
  rejects(bytes, "another codec's id");
}

TEST(Payload, RandomGarbageNeverCrashes) {
  auto identity = IdentityEntry::make({}, {});
  Codec& codec = *identity;
  std::mt19937 rng(3);
  const Payload good = codec.encode(torch::randn({3, 3}));
  for (int i = 0; i < 2000; ++i) {
    auto bytes = good.bytes;
    for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = uint8_t(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    try {
      auto x = codec.decode(Payload{bytes}, torch::kCPU);
      EXPECT_LE(x.numel(), 9 * 256);  // only a well-formed payload decodes
    } catch (const PayloadError&) {
    }
  }
}

}  // namespace
}  // namespace ps
