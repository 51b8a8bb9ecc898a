#include "engine/kernels/KernelError.h"
#include "engine/kernels/TopK.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace ps::kernels {
namespace {

enum class Data { Normal, Ties, Zeros, Negative, Special };

std::vector<float> makeData(Data d, size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(n);
  const float set[] = {-2.f, -1.f, -0.5f, 0.f, -0.f, 0.5f, 1.f, 2.f};
  for (size_t i = 0; i < n; ++i) {
    switch (d) {
      case Data::Normal: x[i] = normal(g); break;
      case Data::Ties: x[i] = set[g() % 8]; break;
      case Data::Zeros: x[i] = (g() % 10 == 0) ? normal(g) : 0.f; break;
      case Data::Negative: x[i] = -std::fabs(normal(g)); break;
      case Data::Special: {
        const uint64_t r = g() % 50;
        x[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? 1e-42f : set[g() % 8];
        break;
      }
    }
  }
  return x;
}

// Reference: the first k of the order (|x| desc, index asc), NaN above everything, then sorted by index.
std::vector<uint32_t> reference(const std::vector<float>& x, size_t k) {
  std::vector<uint32_t> key(x.size()), order(x.size());
  for (size_t i = 0; i < x.size(); ++i) key[i] = magnitudeKey(x[i]);
  std::iota(order.begin(), order.end(), 0u);
  k = std::min(k, x.size());
  if (x.size() < 5000) {  // stable: equal keys keep index order
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key[a] > key[b]; });
  } else if (k < x.size()) {
    std::nth_element(order.begin(), order.begin() + ptrdiff_t(k), order.end(),
                     [&](uint32_t a, uint32_t b) { return key[a] != key[b] ? key[a] > key[b] : a < b; });
  }
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

void checkTopk(const std::vector<float>& x, size_t k, int threads) {
  const size_t want = std::min(k, x.size());
  std::vector<uint32_t> idx(want + 1, 0xdeadbeef);
  std::vector<float> val(want + 1, 12345.f);
  const size_t got = topkSelect(x.data(), x.size(), k, idx.data(), val.data(), threads);
  ASSERT_EQ(got, want);
  EXPECT_EQ(idx[want], 0xdeadbeefu) << "wrote past k";
  idx.resize(want);
  val.resize(want);
  const auto ref = reference(x, k);
  ASSERT_EQ(idx, ref) << "n=" << x.size() << " k=" << k << " threads=" << threads;
  for (size_t j = 0; j < want; ++j) {
    const float a = val[j], b = x[idx[j]];
    ASSERT_TRUE(std::memcmp(&a, &b, 4) == 0) << "value of index " << idx[j];
  }
}

TEST(KernelsTopK, MatchesStableSortReferenceSmall) {
  for (Data d : {Data::Normal, Data::Ties, Data::Zeros, Data::Negative, Data::Special})
    for (size_t n : {1, 2, 3, 7, 8, 31, 100, 257, 1000, 4999})
      for (size_t k : {size_t(1), size_t(2), n / 3, n / 2, n - 1, n, n + 5})
        for (int threads : {1, 2}) checkTopk(makeData(d, n, n * 31 + k), k, threads);
}

TEST(KernelsTopK, MatchesReferenceLargeAndMultiThreaded) {
  // 65535/65536 straddle the switch from 3 to 2 radix passes; 300000 and 1e6 run on several threads.
  for (size_t n : {65535, 65536, 300000})
    for (Data d : {Data::Normal, Data::Ties, Data::Zeros, Data::Special}) {
      const auto x = makeData(d, n, n + size_t(d));
      for (size_t k : {size_t(1), n / 100, n / 10, n / 2 + 1, n - 1})
        for (int threads : {1, 2}) checkTopk(x, k, threads);
    }
  for (Data d : {Data::Normal, Data::Ties}) {
    const size_t n = 1000000;
    const auto x = makeData(d, n, 17);
    for (size_t k : {n / 100, n / 2 + 1}) checkTopk(x, k, 2);
  }
  const auto x = makeData(Data::Ties, 400000, 7);
  checkTopk(x, 123457, 3);  // odd thread count, ties split over chunks
  checkTopk(x, 400000, 2);
}

// The large-n path pre-filters with a bound from a strided sample; these inputs defeat it on purpose and must fall
// back to the plain radix select with the same result.
TEST(KernelsTopK, SampleBoundFallbacks) {
  const size_t n = 1 << 20;
  // 1. Big values exactly at the sampled positions, small elsewhere: the bound is too high (fewer than k candidates).
  {
    auto x = makeData(Data::Normal, n, 5);
    for (auto& v : x) v *= 0.01f;
    const size_t s = std::min<size_t>(8192, std::max<size_t>(1024, n / 64));
    for (size_t j = 0; j < s; ++j) x[(2 * j + 1) * n / (2 * s)] = 100.f + float(j);
    for (int threads : {1, 2}) checkTopk(x, n / 100, threads);
  }
  // 2. Sorted input: all candidates in the first chunk, which overflows its share of the candidate buffer.
  {
    auto x = makeData(Data::Normal, n, 6);
    std::sort(x.begin(), x.end(), [](float a, float b) { return std::fabs(a) > std::fabs(b); });
    for (int threads : {2, 3}) checkTopk(x, n / 20, threads);
    std::reverse(x.begin(), x.end());
    checkTopk(x, n / 20, 2);
  }
  // 3. The bound lands on inf/NaN (many of them): no pre-filter.
  {
    auto x = makeData(Data::Normal, n, 7);
    for (size_t i = 0; i < n; i += 7) x[i] = (i % 2) ? NAN : INFINITY;
    for (size_t k : {n / 100, n / 10, n / 7 + 3}) checkTopk(x, k, 2);
    EXPECT_TRUE(std::isnan(kthLargestAbs(x.data(), n, n / 100)));
  }
  // 4. Few distinct values: the bound is a tie value shared by many elements.
  {
    auto x = makeData(Data::Ties, n, 8);
    for (size_t k : {size_t(1000), n / 100, n / 9}) checkTopk(x, k, 2);
  }
}

TEST(KernelsTopK, RandomSizesAndK) {
  std::mt19937_64 g(99);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + g() % 20000;
    const size_t k = 1 + g() % n;
    checkTopk(makeData(Data(g() % 5), n, g()), k, int(1 + g() % 2));
  }
}

TEST(KernelsTopK, EdgeCases) {
  std::vector<float> x = {1.f, -3.f, 2.f};
  uint32_t idx[5];
  float val[5];
  EXPECT_EQ(topkSelect(x.data(), 3, 0, idx, val), 0u);
  EXPECT_EQ(topkSelect(nullptr, 0, 5, nullptr, nullptr), 0u);
  EXPECT_EQ(topkSelect(x.data(), 3, 1, idx, val), 1u);
  EXPECT_EQ(idx[0], 1u);
  EXPECT_EQ(val[0], -3.f);
  EXPECT_THROW(topkSelect(nullptr, 3, 1, idx, val), KernelError);
  EXPECT_THROW(topkSelect(x.data(), 3, 1, nullptr, val), KernelError);
  // NaN ranks above +inf; -0 equals +0 (ties by index).
  std::vector<float> y = {INFINITY, 0.f, NAN, -0.f, 5.f};
  EXPECT_EQ(topkSelect(y.data(), 5, 2, idx, val), 2u);
  EXPECT_EQ(idx[0], 0u);
  EXPECT_EQ(idx[1], 2u);
  EXPECT_EQ(topkSelect(y.data(), 5, 4, idx, val), 4u);
  EXPECT_EQ(idx[3], 4u);
  EXPECT_EQ(idx[2], 2u);
  EXPECT_EQ(idx[0], 0u);
  EXPECT_EQ(idx[1], 1u);  // the lower-indexed zero
}

TEST(KernelsTopK, KthLargestAbsMatchesNthElement) {
  for (Data d : {Data::Normal, Data::Ties, Data::Zeros, Data::Negative})
    for (size_t n : {1, 5, 1000, 65536, 300000}) {
      const auto x = makeData(d, n, n);
      std::vector<float> a(n);
      for (size_t i = 0; i < n; ++i) a[i] = std::fabs(x[i]);
      for (size_t k : {size_t(1), (n + 1) / 2, n / 100 + 1, n}) {
        std::vector<float> c = a;
        std::nth_element(c.begin(), c.begin() + ptrdiff_t(k - 1), c.end(), std::greater<float>());
        for (int threads : {1, 2}) EXPECT_EQ(kthLargestAbs(x.data(), n, k, threads), c[k - 1]) << n << " " << k;
      }
    }
  std::vector<float> y = {1.f, NAN, -INFINITY};
  EXPECT_TRUE(std::isnan(kthLargestAbs(y.data(), 3, 1)));
  EXPECT_EQ(kthLargestAbs(y.data(), 3, 2), INFINITY);
  EXPECT_EQ(kthLargestAbs(y.data(), 3, 3), 1.f);
  EXPECT_THROW(kthLargestAbs(y.data(), 3, 0), KernelError);
  EXPECT_THROW(kthLargestAbs(y.data(), 3, 4), KernelError);
  EXPECT_THROW(kthLargestAbs(y.data(), 0, 1), KernelError);
}

}  // namespace
}  // namespace ps::kernels
