// Index blocks written and read with tensor operations (engine/compress/IndexTensors.h) against the CPU kernels:
// the same format chosen, the same bytes, and every format read back, at every varint length.
#include "engine/compress/IndexTensors.h"
#include "engine/compress/Payload.h"
#include "engine/kernels/KernelError.h"
#include "engine/tensors/DeviceChecks.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>
#include <vector>

namespace ps {
namespace {

using kernels::IndexFormat;

// k distinct positions below n, ascending, with gaps of every LEB128 length when `spread`.
std::vector<uint32_t> positions(uint64_t n, size_t k, bool spread, uint32_t seed) {
  std::mt19937_64 g(seed);
  std::vector<uint32_t> out;
  if (spread) {  // mostly short gaps, and some of 2, 3, 4 and 5 bytes
    uint64_t at = 0;
    for (size_t j = 0; j < k && at < n; ++j) {
      const int bytes = 1 + int(g() % 5 == 0 ? 1 + g() % 4 : 0);
      const uint64_t gap = 1 + (g() % (uint64_t(1) << (7 * bytes - 1)));
      at += gap;
      if (at >= n) break;
      out.push_back(uint32_t(at));
    }
    return out;
  }
  std::vector<uint32_t> all(n);
  for (uint32_t i = 0; i < n; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), g);
  out.assign(all.begin(), all.begin() + std::ptrdiff_t(std::min<size_t>(k, n)));
  std::sort(out.begin(), out.end());
  return out;
}

torch::Tensor asTensor(const std::vector<uint32_t>& idx) {
  std::vector<int64_t> wide(idx.begin(), idx.end());
  return torch::tensor(wide, torch::kInt64);
}

std::vector<uint8_t> bytesOf(const torch::Tensor& t) {
  const auto c = t.contiguous();
  return {c.data_ptr<uint8_t>(), c.data_ptr<uint8_t>() + c.numel()};
}

struct Case {
  uint64_t n;
  size_t k;
  bool spread;
};

const std::vector<Case> kCases = {{1, 1, false},          {100, 0, false},      {100, 3, false},
                                  {1000, 900, false},     {4096, 128, false},   {4096, 129, false},
                                  {50000, 40, false},     {50000, 5000, false}, {0xffffffffULL, 3000, true},
                                  {1u << 24, 2000, true}, {777, 777, false}};

TEST(IndexTensors, WriteTheCpuEncodersBytesInTheCheapestFormat) {
  uint32_t seed = 1;
  std::vector<int> formats(3, 0);
  for (const auto& c : kCases) {
    const auto idx = positions(c.n, c.k, c.spread, seed++);
    SCOPED_TRACE("n=" + std::to_string(c.n) + " k=" + std::to_string(idx.size()));
    std::vector<uint8_t> expected;
    kernels::encodeIndices(idx.data(), idx.size(), c.n, expected);
    const auto block = encodeIndexTensor(asTensor(idx), c.n);
    ASSERT_EQ(uint8_t(block.format), expected[0]);
    ++formats[expected[0]];
    EXPECT_EQ(bytesOf(block.payload), std::vector<uint8_t>(expected.begin() + 1, expected.end()));
  }
  for (int f = 0; f < 3; ++f) EXPECT_GT(formats[size_t(f)], 0) << "no case chose format " << f;
}

TEST(IndexTensors, ReadEveryFormatBack) {
  uint32_t seed = 100;
  for (const auto& c : kCases) {
    const auto idx = positions(c.n, c.k, c.spread, seed++);
    for (auto f : {IndexFormat::Absolute32, IndexFormat::DeltaVarint, IndexFormat::Bitmap}) {
      if (f == IndexFormat::Bitmap && c.n > (1u << 24)) continue;  // a 512 MiB bitmap proves nothing more
      SCOPED_TRACE("n=" + std::to_string(c.n) + " k=" + std::to_string(idx.size()) + " format " +
                   std::to_string(int(f)));
      std::vector<uint8_t> bytes;
      kernels::encodeIndicesAs(f, idx.data(), idx.size(), c.n, bytes);
      const auto payload = torch::tensor(std::vector<int64_t>(bytes.begin() + 1, bytes.end())).to(torch::kUInt8);
      EXPECT_TRUE(torch::equal(decodeIndexTensor(f, payload, idx.size(), c.n), asTensor(idx)));
    }
  }
}

// A bitmap longer than the scan's chunk (2^24 bits): positions on both sides of the chunk's end, counted across it.
TEST(IndexTensors, ABitmapIsReadAcrossTheScansChunks) {
  const uint64_t n = (uint64_t(1) << 24) + 100;
  const std::vector<uint32_t> idx = {0, 5, (1u << 24) - 1, 1u << 24, (1u << 24) + 99};
  std::vector<uint8_t> bytes;
  kernels::encodeIndicesAs(IndexFormat::Bitmap, idx.data(), idx.size(), n, bytes);
  const auto payload = torch::from_blob(bytes.data() + 1, {int64_t(bytes.size() - 1)}, torch::kUInt8).clone();
  EXPECT_TRUE(torch::equal(decodeIndexTensor(IndexFormat::Bitmap, payload, idx.size(), n), asTensor(idx)));
  DeferredChecks checks;
  const auto fewer = decodeIndexTensor(IndexFormat::Bitmap, payload, 4, n);  // the first four, then refused
  EXPECT_TRUE(torch::equal(fewer, asTensor({0, 5, (1u << 24) - 1, 1u << 24})));
  EXPECT_THROW(checks.settle(), PayloadError);
}

TEST(IndexTensors, ABlockOfTheWrongSizeOrCountIsAnError) {
  const std::vector<uint32_t> idx = {2, 9, 300, 301};
  for (auto f : {IndexFormat::Absolute32, IndexFormat::DeltaVarint, IndexFormat::Bitmap}) {
    SCOPED_TRACE(int(f));
    std::vector<uint8_t> bytes;
    kernels::encodeIndicesAs(f, idx.data(), idx.size(), 400, bytes);
    const auto payload = torch::tensor(std::vector<int64_t>(bytes.begin() + 1, bytes.end())).to(torch::kUInt8);
    EXPECT_THROW(decodeIndexTensor(f, payload, 5, 400), PayloadError);
    EXPECT_THROW(decodeIndexTensor(f, payload.narrow(0, 0, payload.numel() - 1), 4, 400), PayloadError);
  }
}

TEST(IndexTensors, RefuseWhatTheCpuDecoderRefuses) {
  // A block from another process is untrusted: every one of these is refused by both readers.
  struct Bad {
    IndexFormat format;
    std::vector<uint8_t> payload;
    uint64_t k, n;
    const char* why;
  };
  const std::vector<Bad> bad = {
      {IndexFormat::Absolute32, {5, 0, 0, 0, 3, 0, 0, 0}, 2, 10, "descending"},
      {IndexFormat::Absolute32, {2, 0, 0, 0, 2, 0, 0, 0}, 2, 10, "repeated"},
      {IndexFormat::Absolute32, {2, 0, 0, 0, 10, 0, 0, 0}, 2, 10, "not below n"},
      {IndexFormat::DeltaVarint, {0x03, 0x00}, 2, 10, "a gap of 0"},
      {IndexFormat::DeltaVarint, {0x83, 0x00}, 1, 10, "not minimal"},
      {IndexFormat::DeltaVarint, {0x81, 0x80, 0x80, 0x80, 0x80, 0x01}, 1, 1000, "six bytes"},
      {IndexFormat::DeltaVarint, {0x0b}, 1, 10, "not below n"},
      {IndexFormat::DeltaVarint, {0x83}, 1, 10, "unterminated"},
      {IndexFormat::Bitmap, {0x01, 0x08}, 2, 10, "a padding bit set"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.why);
    std::vector<uint32_t> out(b.k);
    EXPECT_THROW(kernels::decodeIndices(b.payload.data(), b.payload.size(), b.k, b.n, out.data()),
                 kernels::KernelError);
    const auto payload = torch::tensor(std::vector<int64_t>(b.payload.begin(), b.payload.end())).to(torch::kUInt8);
    EXPECT_THROW(decodeIndexTensor(b.format, payload, b.k, b.n), PayloadError);
    // Where checks are read once a step (a GPU stage's): the block decodes to k positions that are still inside the
    // tensor, so using them reads nothing out of bounds, and the refusal comes when the checks are read.
    DeferredChecks checks;
    torch::Tensor idx;
    ASSERT_NO_THROW(idx = decodeIndexTensor(b.format, payload, b.k, b.n));
    ASSERT_EQ(uint64_t(idx.numel()), b.k);
    EXPECT_GE(idx.min().item<int64_t>(), 0);
    EXPECT_LT(idx.max().item<int64_t>(), int64_t(b.n));
    EXPECT_THROW(checks.settle(), PayloadError);
  }
  // More indices than elements is a host fact, refused at once in any format.
  for (auto f : {IndexFormat::Absolute32, IndexFormat::DeltaVarint, IndexFormat::Bitmap}) {
    DeferredChecks checks;
    EXPECT_THROW(decodeIndexTensor(f, torch::zeros({12}, torch::kUInt8), 3, 2), PayloadError) << int(f);
  }
  // A count the block does not hold, under deferred checks too (a size that does not fit is refused at once).
  const std::vector<uint32_t> idx = {2, 9, 300, 301};
  for (auto f : {IndexFormat::DeltaVarint, IndexFormat::Bitmap}) {
    SCOPED_TRACE(int(f));
    std::vector<uint8_t> bytes;
    kernels::encodeIndicesAs(f, idx.data(), idx.size(), 400, bytes);
    const auto payload = torch::tensor(std::vector<int64_t>(bytes.begin() + 1, bytes.end())).to(torch::kUInt8);
    for (uint64_t k : {3, 5}) {
      DeferredChecks checks;
      torch::Tensor got;
      ASSERT_NO_THROW(got = decodeIndexTensor(f, payload, k, 400));
      ASSERT_EQ(uint64_t(got.numel()), k);
      EXPECT_GE(got.min().item<int64_t>(), 0);
      EXPECT_LT(got.max().item<int64_t>(), 400);
      EXPECT_THROW(checks.settle(), PayloadError);
    }
    DeferredChecks checks;  // and a good block leaves nothing failed
    EXPECT_TRUE(torch::equal(decodeIndexTensor(f, payload, 4, 400), torch::tensor({2, 9, 300, 301}, torch::kInt64)));
    EXPECT_NO_THROW(checks.settle());
  }
}

}  // namespace
}  // namespace ps
