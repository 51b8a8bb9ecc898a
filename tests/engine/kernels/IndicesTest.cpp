#include "engine/kernels/Indices.h"
#include "engine/kernels/KernelError.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace ps::kernels {
namespace {

std::vector<uint32_t> randomSet(size_t n, size_t k, std::mt19937_64& g) {
  std::vector<uint32_t> idx;
  if (k * 4 >= n) {  // dense: a Bernoulli-like pass, trimmed to k
    for (size_t i = 0; i < n; ++i) idx.push_back(uint32_t(i));
    std::shuffle(idx.begin(), idx.end(), g);
    idx.resize(k);
  } else {
    while (idx.size() < k) {
      for (size_t j = idx.size(); j < k; ++j) idx.push_back(uint32_t(g() % n));
      std::sort(idx.begin(), idx.end());
      idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    }
  }
  std::sort(idx.begin(), idx.end());
  return idx;
}

size_t varintSize(const std::vector<uint32_t>& idx) {
  size_t s = 0;
  int64_t prev = -1;
  for (uint32_t v : idx) {
    uint64_t gap = uint64_t(int64_t(v) - prev);
    prev = v;
    do ++s, gap >>= 7;
    while (gap);
  }
  return s;
}

std::vector<uint32_t> decode(const std::vector<uint8_t>& bytes, size_t k, size_t n) {
  std::vector<uint32_t> out(k);
  EXPECT_EQ(decodeIndices(bytes.data(), bytes.size(), k, n, out.data()), bytes.size());
  return out;
}

TEST(KernelsIndices, ScatterSortedWritesValuesAndZerosEverywhereElse) {
  std::mt19937 gen(11);
  // Sizes around the parallel threshold, densities from empty to full, with chunk edges falling between indices.
  for (size_t n : {size_t(1), size_t(1000), size_t(1) << 18, (size_t(1) << 20) + 7}) {
    for (double density : {0.0, 0.001, 0.1, 1.0}) {
      std::vector<uint32_t> idx;
      std::bernoulli_distribution keep(density);
      for (size_t i = 0; i < n; ++i)
        if (keep(gen)) idx.push_back(uint32_t(i));
      std::vector<float> values(idx.size());
      for (size_t j = 0; j < values.size(); ++j) values[j] = float(j + 1);
      std::vector<float> out(n, 123.f);  // garbage the scatter must overwrite
      scatterSorted(idx.data(), values.data(), idx.size(), out.data(), n, 2);
      std::vector<float> want(n, 0.f);
      for (size_t j = 0; j < idx.size(); ++j) want[idx[j]] = values[j];
      EXPECT_EQ(out, want) << "n=" << n << " density=" << density;
    }
  }
  std::vector<float> out(8);
  const float v[2] = {1, 2};
  const uint32_t unordered[2] = {3, 3}, outside[2] = {1, 8};
  EXPECT_THROW(scatterSorted(unordered, v, 2, out.data(), 8), KernelError);
  EXPECT_THROW(scatterSorted(outside, v, 2, out.data(), 8), KernelError);
  // On two threads each validates its own chunk's slice; disorder across the chunk edge, inside one chunk, a
  // repeat, an index == n and a list sorted except for its last element are all refused.
  const size_t n = size_t(1) << 20;
  std::vector<float> big(n);
  const std::vector<std::vector<uint32_t>> bad = {
      {600000, 10}, {10, 600000, 20}, {10, 5, 600000}, {600000, 600000}, {5, uint32_t(n)}, {5, 700000, 600000}};
  for (const auto& idx : bad) {
    const std::vector<float> values(idx.size(), 1.f);
    EXPECT_THROW(scatterSorted(idx.data(), values.data(), idx.size(), big.data(), n, 2), KernelError)
        << idx[0] << "," << idx[1];
  }
}

TEST(KernelsIndices, RoundTripAndCheapestFormat) {
  std::mt19937_64 g(1);
  for (size_t n : {1, 2, 9, 64, 1000, 100000, 1000000})
    for (size_t k : {size_t(0), size_t(1), size_t(3), n / 1000, n / 100, n / 30, n / 4, n / 2, n - 1, n}) {
      if (k > n) continue;
      const auto idx = randomSet(n, k, g);
      const size_t sizes[] = {4 * k, varintSize(idx), (n + 7) / 8};
      IndexFormat best;
      const size_t bytes = encodedIndexBytes(idx.data(), k, n, &best);
      EXPECT_EQ(bytes, 1 + *std::min_element(std::begin(sizes), std::end(sizes))) << n << " " << k;
      EXPECT_EQ(sizes[size_t(best)] + 1, bytes);
      std::vector<uint8_t> out = {0xEE};  // encode appends
      ASSERT_EQ(encodeIndices(idx.data(), k, n, out), bytes);
      ASSERT_EQ(out.size(), bytes + 1);
      EXPECT_EQ(out[0], 0xEE);
      EXPECT_EQ(out[1], uint8_t(best));
      EXPECT_EQ(decode(std::vector<uint8_t>(out.begin() + 1, out.end()), k, n), idx);
      for (IndexFormat f : {IndexFormat::Absolute32, IndexFormat::DeltaVarint, IndexFormat::Bitmap}) {
        std::vector<uint8_t> forced;
        ASSERT_EQ(encodeIndicesAs(f, idx.data(), k, n, forced), 1 + sizes[size_t(f)]);
        EXPECT_EQ(decode(forced, k, n), idx);
      }
    }
}

TEST(KernelsIndices, EachFormatWinsWhereItShould) {
  IndexFormat f;
  std::vector<uint32_t> dense(500000);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = uint32_t(2 * i);
  encodedIndexBytes(dense.data(), dense.size(), 1000000, &f);
  EXPECT_EQ(f, IndexFormat::Bitmap);  // 50%: n/8 bytes beats 1 byte per gap
  std::vector<uint32_t> sparse = {10, 50000, 700000, 999999};
  encodedIndexBytes(sparse.data(), sparse.size(), 1000000, &f);
  EXPECT_EQ(f, IndexFormat::DeltaVarint);  // gaps < 2^21: 3 bytes each
  std::vector<uint32_t> huge = {3000000000u};
  EXPECT_EQ(encodedIndexBytes(huge.data(), 1, 4000000000u, &f), 5u);
  EXPECT_EQ(f, IndexFormat::Absolute32);  // a 5-byte varint loses to 4 bytes
  std::vector<uint8_t> out;
  encodeIndices(huge.data(), 1, 4000000000u, out);
  EXPECT_EQ(decode(out, 1, 4000000000u), huge);
  std::vector<uint32_t> none;
  EXPECT_EQ(encodedIndexBytes(none.data(), 0, 1000, &f), 1u);
  EXPECT_EQ(f, IndexFormat::Absolute32);
  // Gap 2^32 - 1 + 1 from -1 at the largest allowed n still fits 32 bits.
  std::vector<uint32_t> last = {0xfffffffeu};
  out.clear();
  encodeIndicesAs(IndexFormat::DeltaVarint, last.data(), 1, kMaxElements, out);
  EXPECT_EQ(decode(out, 1, kMaxElements), last);
}

TEST(KernelsIndices, EncoderRejectsBadInput) {
  std::vector<uint8_t> out;
  std::vector<uint32_t> notAscending = {1, 1}, descending = {5, 2}, tooBig = {1, 10};
  EXPECT_THROW(encodeIndices(notAscending.data(), 2, 10, out), KernelError);
  EXPECT_THROW(encodeIndices(descending.data(), 2, 10, out), KernelError);
  EXPECT_THROW(encodeIndices(tooBig.data(), 2, 10, out), KernelError);
  EXPECT_THROW(encodeIndices(tooBig.data(), 11, 10, out), KernelError);  // k > n
  EXPECT_THROW(encodedIndexBytes(tooBig.data(), 1, size_t(1) << 32), KernelError);
  EXPECT_TRUE(out.empty());
}

// Large lists are varint-coded in chunks on several threads (2^16 indices and up): the bytes must be those of the
// one-pass writer (encodeIndicesAs), gaps of every varint length included, and a violation in any chunk, or
// across the edge between two, must still be refused.
TEST(KernelsIndices, ChunkedVarintEncodingEqualsTheOnePassWriter) {
  std::mt19937_64 g(21);
  for (size_t k : {size_t(1) << 16, (size_t(1) << 17) + 3, size_t(300001)}) {
    std::vector<uint32_t> idx(k);
    uint64_t at = g() % 5;
    for (size_t j = 0; j < k; ++j) {
      idx[j] = uint32_t(at);
      const uint64_t r = g() % 1000;  // mostly 1-byte gaps, some of 2, 3 and 4 bytes
      at += r < 900 ? 1 + g() % 60 : r < 970 ? 128 + g() % 9000 : r < 999 ? 20000 + g() % 100000 : 2097152 + g() % 9;
    }
    const size_t n = size_t(at) + 7;
    std::vector<uint8_t> chunked, onePass;
    IndexFormat f;
    encodedIndexBytes(idx.data(), k, n, &f);
    ASSERT_EQ(f, IndexFormat::DeltaVarint) << k;
    encodeIndicesAs(IndexFormat::DeltaVarint, idx.data(), k, n, onePass);
    const int maxThreads = omp_get_max_threads();
    for (int threads : {3, 2}) {  // chunks on three and two threads, whatever the machine
      omp_set_num_threads(threads);
      chunked.clear();
      encodeIndices(idx.data(), k, n, chunked);
      ASSERT_EQ(chunked, onePass) << k << " on " << threads << " threads";
    }
    omp_set_num_threads(maxThreads);
    std::vector<uint32_t> back(k);
    decodeIndices(chunked.data(), chunked.size(), k, n, back.data());
    EXPECT_EQ(back, idx);
    std::vector<uint8_t> out;
    for (size_t at : {k / 2, k / 2 + 1, k - 1}) {  // at and around the middle chunk edge, and in the last chunk
      auto bad = idx;
      bad[at] = bad[at - 1];
      EXPECT_THROW(encodeIndices(bad.data(), k, n, out), KernelError) << "repeat at " << at;
      bad = idx;
      bad[at] = uint32_t(n);
      if (at + 1 < k) bad[at + 1] = uint32_t(n) + 1;
      EXPECT_THROW(encodeIndices(bad.data(), k, n, out), KernelError) << "index >= n at " << at;
    }
    EXPECT_TRUE(out.empty());
  }
}

// What a DeltaVarint block must be, written as plainly as possible: k minimal LEB128 varints of at most 5 bytes and
// 32 bits, gaps >= 1 (the first from -1), every index < n, no byte left over. Returns false to reject.
bool referenceVarintDecode(const std::vector<uint8_t>& bytes, size_t k, size_t n, std::vector<uint32_t>& out) {
  out.clear();
  size_t pos = 1;
  int64_t prev = -1;
  for (size_t j = 0; j < k; ++j) {
    uint64_t gap = 0;
    size_t len = 0;
    for (;;) {
      if (pos >= bytes.size() || len == 5) return false;
      const uint8_t b = bytes[pos++];
      gap |= uint64_t(b & 0x7f) << (7 * len++);
      if (!(b & 0x80)) {
        if (b == 0 && len > 1) return false;
        break;
      }
    }
    if (gap == 0 || gap > 0xffffffffull) return false;
    prev += int64_t(gap);
    if (uint64_t(prev) >= n) return false;
    out.push_back(uint32_t(prev));
  }
  return pos == bytes.size();
}

// Big blocks decode on several threads in two passes cut at varint boundaries (2^16 indices and up). Differential
// test against the plain decoder: mutations near every cut (the middle for two threads) and at the ends must be
// accepted or refused exactly as it does, and what is accepted must decode to the same indices.
TEST(KernelsIndices, ChunkedVarintDecodingAcceptsExactlyWhatThePlainDecoderAccepts) {
  std::mt19937_64 g(8);
  const size_t k = 200000;
  std::vector<uint32_t> idx(k);
  uint64_t at = 3;
  for (size_t j = 0; j < k; ++j) {
    idx[j] = uint32_t(at);
    const uint64_t r = g() % 1000;
    at += r < 900 ? 1 + g() % 100 : r < 990 ? 128 + g() % 9000 : 20000 + g() % 100000;
  }
  const size_t n = size_t(at);
  std::vector<uint8_t> good;
  encodeIndicesAs(IndexFormat::DeltaVarint, idx.data(), k, n, good);
  std::vector<uint32_t> out(k + 1), want;
  ASSERT_EQ(decodeIndices(good.data(), good.size(), k, n, out.data()), good.size());
  ASSERT_TRUE(std::equal(idx.begin(), idx.end(), out.begin()));
  size_t accepted = 0, rejected = 0;
  const uint8_t pokes[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xff};
  const int maxThreads = omp_get_max_threads();
  for (int trial = 0; trial < 600; ++trial) {
    omp_set_num_threads(1 + trial % 3);  // one, two and three cuts, whatever the machine
    std::vector<uint8_t> bad = good;
    size_t kk = k, nn = n;
    const size_t middle = good.size() / 2, where = trial % 3 == 0 ? good.size() - 1 - g() % 12
                                                                   : middle - 12 + g() % 24;
    switch (trial % 6) {
      case 0: bad[where] = pokes[g() % 6]; break;                                  // one byte changed
      case 1: bad[where] = pokes[g() % 6], bad[where + 1] = pokes[g() % 6]; break;  // two
      case 2: bad.insert(bad.begin() + long(where), pokes[g() % 6]); break;        // a byte more
      case 3: bad.erase(bad.begin() + long(where)); break;                         // a byte less
      case 4: kk = k + (g() % 2 ? 1 : size_t(-1)); break;                          // another count
      case 5: nn = g() % 2 ? n - 1 : n; std::fill_n(bad.begin() + long(middle), 1 + g() % 7, 0x80); break;
    }
    const bool ok = referenceVarintDecode(bad, kk, nn, want);
    std::fill(out.begin(), out.end(), 0xabcdefu);
    bool decoded = true;
    try {
      decodeIndices(bad.data(), bad.size(), kk, nn, out.data());
    } catch (const KernelError&) {
      decoded = false;
    }
    ASSERT_EQ(decoded, ok) << "trial " << trial;
    if (ok) ASSERT_TRUE(std::equal(want.begin(), want.end(), out.begin())) << "trial " << trial;
    if (kk < out.size()) EXPECT_EQ(out[kk], 0xabcdefu) << "wrote past k, trial " << trial;
    (ok ? accepted : rejected) += 1;
  }
  omp_set_num_threads(maxThreads);
  EXPECT_GT(accepted, 20u);  // both outcomes are exercised
  EXPECT_GT(rejected, 200u);
}

TEST(KernelsIndices, SetBitPositionsMatchesABitByBitScanAndIgnoresBitsPastN) {
  std::mt19937_64 g(13);
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(1000), size_t(100003)}) {
    for (int density : {0, 1, 50, 100}) {
      std::vector<uint8_t> bits((n + 7) / 8 + 8, 0xff);  // bytes past n stay all ones: they must be ignored
      for (size_t i = 0; i < n; ++i)
        if (int(g() % 100) >= density) bits[i >> 3] &= uint8_t(~(1u << (i & 7)));
      std::vector<uint32_t> want;
      for (size_t i = 0; i < n; ++i)
        if (bits[i >> 3] >> (i & 7) & 1u) want.push_back(uint32_t(i));
      std::vector<uint32_t> got(n + 1, 0xabcdef);
      ASSERT_EQ(setBitPositions(bits.data(), n, got.data()), want.size()) << n << " " << density;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << n << " " << density;
      EXPECT_EQ(got[want.size()], 0xabcdefu) << "wrote past the count";
    }
  }
}

void expectRejected(const std::vector<uint8_t>& bytes, size_t k, size_t n, const std::string& why) {
  std::vector<uint32_t> out(k + 1, 0xabcdef);
  try {
    decodeIndices(bytes.data(), bytes.size(), k, n, out.data());
    ADD_FAILURE() << "accepted: " << why;
  } catch (const KernelError&) {
  }
  EXPECT_EQ(out[k], 0xabcdefu) << "wrote past k: " << why;
}

TEST(KernelsIndices, DecoderRejectsMalformedBytes) {
  using B = std::vector<uint8_t>;
  expectRejected({}, 0, 10, "no format byte");
  expectRejected({3}, 0, 10, "format 3");
  expectRejected({255, 1}, 1, 10, "format 255");
  // Absolute32
  expectRejected({0, 1, 0, 0}, 1, 10, "truncated absolute");
  expectRejected({0, 1, 0, 0, 0, 0}, 1, 10, "trailing byte after absolute");
  expectRejected({0, 2, 0, 0, 0, 2, 0, 0, 0}, 2, 10, "repeated absolute index");
  expectRejected({0, 3, 0, 0, 0, 2, 0, 0, 0}, 2, 10, "descending absolute");
  expectRejected({0, 10, 0, 0, 0}, 1, 10, "absolute index == n");
  expectRejected({0, 0xff, 0xff, 0xff, 0xff}, 1, 10, "absolute index 2^32-1");
  // DeltaVarint (gaps from -1: the byte 1 means index 0)
  expectRejected({1}, 1, 10, "missing varint");
  expectRejected({1, 0x81}, 1, 1000, "truncated varint");
  expectRejected({1, 1, 2}, 1, 10, "trailing varint");
  expectRejected({1, 1, 0}, 2, 10, "zero gap");
  expectRejected({1, 0}, 1, 10, "zero first gap");
  expectRejected({1, 11}, 1, 10, "varint index == n");
  expectRejected({1, 5, 6}, 2, 10, "sum of gaps >= n");
  expectRejected({1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 1, kMaxElements, "varint of 6 bytes");
  expectRejected({1, 0xff, 0xff, 0xff, 0xff, 0x1f}, 1, kMaxElements, "varint of 35 bits");
  expectRejected({1, 0x80, 0x80, 0x80, 0x80, 0x10}, 1, kMaxElements, "varint 2^32");
  expectRejected({1, 0x81, 0x00}, 1, 10, "non-minimal varint");
  // Eight one-byte varints in a row take the decoder's word-at-a-time path: the same checks apply there.
  expectRejected({1, 1, 1, 1, 1, 1, 1, 1, 5}, 8, 10, "eight short varints ending past n");
  expectRejected({1, 1, 1, 1, 0, 1, 1, 1, 1}, 8, 20, "zero gap inside eight short varints");
  expectRejected({1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 8, 20, "trailing varint after eight short ones");
  // Bitmap
  expectRejected({2, 0x01}, 1, 16, "truncated bitmap");
  expectRejected({2, 0x01, 0x00, 0x00}, 1, 16, "trailing bitmap byte");
  expectRejected({2, 0x03, 0x00}, 1, 16, "popcount 2 for k 1");
  expectRejected({2, 0x01, 0x00}, 2, 16, "popcount 1 for k 2");
  expectRejected({2, 0x01, 0x04}, 2, 10, "padding bit set");
  expectRejected({2, 0xff, 0xff}, 16, 10, "k > n");
  // k > n and n too large are argument errors for every format
  expectRejected({0}, 11, 10, "k > n");
  expectRejected({0}, 0, size_t(1) << 32, "n > 2^32 - 1");
  // and well-formed bytes decode
  std::vector<uint32_t> out(2);
  EXPECT_EQ(decodeIndices(B{1, 3, 4}.data(), 3, 2, 10, out.data()), 3u);
  EXPECT_EQ(out, (std::vector<uint32_t>{2, 6}));
  EXPECT_EQ(decodeIndices(B{2, 0x44, 0x00}.data(), 3, 2, 10, out.data()), 3u);
  EXPECT_EQ(out, (std::vector<uint32_t>{2, 6}));
  EXPECT_EQ(decodeIndices(B{0}.data(), 1, 0, 0, nullptr), 1u);
}

// Random mutations of valid encodings: every outcome is either a KernelError or a valid index set; under the
// sanitizer build this also proves nothing is read or written out of bounds (the output holds exactly k entries).
TEST(KernelsIndices, FuzzedBytesNeverCrash) {
  std::mt19937_64 g(12345);
  size_t accepted = 0, rejected = 0;
  for (int iter = 0; iter < 6000; ++iter) {
    const size_t n = 1 + g() % 3000;
    const size_t k = g() % (n / (1 + g() % 8) + 1);
    const auto idx = randomSet(n, std::min(k, n), g);
    std::vector<uint8_t> bytes;
    encodeIndicesAs(IndexFormat(g() % 3), idx.data(), idx.size(), n, bytes);
    const int mutations = int(g() % 4);
    for (int m = 0; m < mutations; ++m) {
      switch (g() % 5) {
        case 0: if (!bytes.empty()) bytes[g() % bytes.size()] ^= uint8_t(1u << (g() % 8)); break;
        case 1: if (!bytes.empty()) bytes[g() % bytes.size()] = uint8_t(g()); break;
        case 2: bytes.resize(g() % (bytes.size() + 1)); break;
        case 3: bytes.push_back(uint8_t(g())); break;
        default: if (!bytes.empty()) bytes[0] = uint8_t(g() % 4); break;
      }
    }
    size_t kk = idx.size(), nn = n;
    if (g() % 8 == 0) kk = g() % (n + 2);
    if (g() % 8 == 0) nn = g() % (n + 2);
    std::vector<uint32_t> out(kk);
    // Give the decoder a buffer that ends exactly at the payload so a read past it is a sanitizer error.
    std::vector<uint8_t> exact(bytes);
    try {
      const size_t used = decodeIndices(exact.data(), exact.size(), kk, nn, out.data());
      ASSERT_EQ(used, exact.size());
      for (size_t j = 0; j < kk; ++j) {
        ASSERT_LT(out[j], nn);
        if (j) {
          ASSERT_LT(out[j - 1], out[j]);
        }
      }
      ++accepted;
    } catch (const KernelError&) {
      ++rejected;
    }
  }
  EXPECT_GT(accepted, 500u);
  EXPECT_GT(rejected, 500u);
}

}  // namespace
}  // namespace ps::kernels
