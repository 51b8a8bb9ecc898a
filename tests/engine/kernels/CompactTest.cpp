// The stream-compaction primitives (Compress.h) against a plain loop, at every start offset and length around the
// vector widths (4 and 8 lanes, 16- and 32-element blocks) so the SIMD bodies, their block skip and the scalar tails
// all run; keys cover NaN, infinities, signed zeros, denormals and values equal to the threshold.
#include "engine/kernels/Compress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace ps::kernels {
namespace {

uint32_t key(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b & 0x7fffffffu;
}

std::vector<float> mixedData(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> x(n);
  const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.f, -0.f, 1e-40f, -1e-40f, 1.f, -1.f, 2.f};
  for (size_t i = 0; i < n; ++i) x[i] = (g() % 7 == 0) ? specials[g() % 11] : d(g);
  return x;
}

TEST(KernelsCompact, SelectionsMatchAPlainLoopAtEveryOffsetAndLength) {
  const auto x = mixedData(200, 9);
  const float thresholds[] = {0.f, 1e-40f, 0.5f, 1.f, 2.f, INFINITY};
  std::vector<uint32_t> idx(200 + kSelectSlack);
  std::vector<float> val(200 + kSelectSlack);
  for (size_t b = 0; b < 40; ++b)
    for (size_t e = b; e <= x.size(); e += (e - b < 70 ? 1 : 13)) {
      for (float t : thresholds) {
        const uint32_t T = key(t);
        std::vector<uint32_t> want;
        for (size_t i = b; i < e; ++i)
          if (key(x[i]) > T) want.push_back(uint32_t(i));
        const size_t got = selectAbove(x.data(), b, e, T, idx.data());
        ASSERT_EQ(std::vector<uint32_t>(idx.begin(), idx.begin() + long(got)), want) << b << ".." << e << " > " << t;
        std::fill(val.begin(), val.end(), 7.f);
        const size_t got2 = selectAboveWithValues(x.data(), b, e, T, idx.data(), val.data());
        ASSERT_EQ(std::vector<uint32_t>(idx.begin(), idx.begin() + long(got2)), want) << b << ".." << e;
        for (size_t j = 0; j < got2; ++j)
          ASSERT_EQ(std::memcmp(&val[j], &x[want[j]], 4), 0) << "value bits differ at " << want[j];
        EXPECT_EQ(countAboveKey(x.data(), b, e, T), want.size());
      }
      for (auto [lo, hi] : {std::pair<float, float>{0.f, 1.f}, {1.f, 1.f}, {0.5f, 2.f}, {1e-40f, INFINITY}}) {
        const uint32_t L = key(lo), H = key(hi);
        std::vector<uint32_t> want;
        for (size_t i = b; i < e; ++i)
          if (key(x[i]) >= L && key(x[i]) <= H) want.push_back(uint32_t(i));
        const size_t got = selectInRange(x.data(), b, e, L, H, idx.data());
        ASSERT_EQ(std::vector<uint32_t>(idx.begin(), idx.begin() + long(got)), want) << b << ".." << e;
      }
    }
  EXPECT_EQ(selectInRange(x.data(), 0, x.size(), key(2.f), key(1.f), idx.data()), 0u);  // empty range
}

// The outputs are written through their slack and no further: a guard after the slack stays untouched.
TEST(KernelsCompact, WritesStayInsideTheDocumentedRoom) {
  const auto x = mixedData(1000, 4);
  std::vector<uint32_t> idx(1000 + kSelectSlack + 16, 0xdeadbeefu);
  std::vector<float> val(1000 + kSelectSlack + 16, 42.f);
  for (size_t e : {size_t(0), size_t(5), size_t(31), size_t(32), size_t(999), size_t(1000)}) {
    selectAboveWithValues(x.data(), 0, e, 0, idx.data(), val.data());
    for (size_t j = e + kSelectSlack; j < idx.size(); ++j) {
      ASSERT_EQ(idx[j], 0xdeadbeefu) << "index written past the room at " << j << " for " << e;
      ASSERT_EQ(val[j], 42.f) << "value written past the room at " << j << " for " << e;
    }
  }
}

}  // namespace
}  // namespace ps::kernels
