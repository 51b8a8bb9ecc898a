// The scaled-sign and QSGD kernels against plain loops: bits, sums, codes and values, on every thread count.
#include "engine/kernels/BitPack.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Qsgd.h"
#include "engine/kernels/Sign.h"

#include "tests/engine/kernels/KernelTestData.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace ps::kernels {
namespace {

TEST(KernelsSign, BitsAndSumMatchAPlainLoopOnEveryThreadCount) {
  for (size_t n : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(1000), (size_t(1) << 18) + 3}) {
    auto x = normalData(n, n);
    if (n > 4) x[0] = 0.f, x[1] = -0.f, x[2] = NAN, x[3] = -INFINITY;
    std::vector<uint8_t> want((n + 7) / 8, 0);
    double l1 = 0;
    for (size_t i = 0; i < n; ++i) {
      want[i / 8] |= uint8_t(x[i] >= 0.f) << (i % 8);
      if (std::isfinite(x[i])) l1 += std::fabs(x[i]);
    }
    std::vector<double> sums;
    for (int threads : {1, 2, 3}) {
      std::vector<uint8_t> got(want.size(), 0xee);
      sums.push_back(signPack(x.data(), n, got.data(), threads));
      EXPECT_EQ(got, want) << n << " " << threads;
    }
    for (double other : {sums[1], sums[2]})  // bit for bit, NaN included
      EXPECT_EQ(std::memcmp(&sums[0], &other, sizeof(double)), 0) << "the sum must not depend on the thread count";
    if (n > 4) {
      EXPECT_TRUE(std::isnan(sums[0]) || std::isinf(sums[0]));  // NaN and inf reach the sum: the scale shows them
      x[2] = 1.f, x[3] = -1.f;
      l1 += 2;
      std::vector<uint8_t> got(want.size());
      EXPECT_NEAR(signPack(x.data(), n, got.data()), l1, 1e-6 * l1) << n;
    } else {
      EXPECT_NEAR(sums[0], l1, 1e-6 * l1);
    }
  }
}

TEST(KernelsSign, UnpackGivesPlusOrMinusScaleAndRefusesBadBytes) {
  const size_t n = (size_t(1) << 18) + 5;
  auto x = normalData(n, 3);
  std::vector<uint8_t> bits((n + 7) / 8);
  signPack(x.data(), n, bits.data());
  for (int threads : {1, 2}) {
    std::vector<float> out(n);
    signUnpack(bits.data(), bits.size(), n, 0.25f, out.data(), threads);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] >= 0 ? 0.25f : -0.25f) << i;
  }
  std::vector<float> out(n);
  EXPECT_THROW(signUnpack(bits.data(), bits.size() - 1, n, 1.f, out.data()), KernelError);
  bits.back() |= 0x80;  // n % 8 == 5: bits 5..7 of the last byte are padding
  EXPECT_THROW(signUnpack(bits.data(), bits.size(), n, 1.f, out.data()), KernelError);
}

// QSGD through its packed form; returns the codes unpacked, one per byte, for checking.
std::vector<uint8_t> qsgdCodes(const std::vector<float>& x, size_t bucket, int s, uint64_t seed, float* norms,
                               std::vector<uint8_t>* packed = nullptr, int threads = 0) {
  const int bits = qsgdBits(s);
  std::vector<uint8_t> p(packedBytes(x.size(), bits), 0xee), codes(x.size());
  qsgdEncode(x.data(), x.size(), bucket, s, seed, norms, p.data(), threads);
  unpackCodes(p.data(), x.size(), bits, codes.data());
  if (packed) *packed = p;
  return codes;
}

TEST(KernelsQsgd, CodesAreValidDeterministicAndDecodeByTheFormula) {
  const size_t n = (size_t(1) << 18) + 9, bucket = 512, buckets = (n + bucket - 1) / bucket;
  auto x = normalData(n, 5);
  x[100] = 0.f, x[101] = -0.f;
  for (size_t i = 2 * bucket; i < 3 * bucket; ++i) x[i] = 0.f;  // a zero bucket
  const int s = 4;
  EXPECT_EQ(qsgdBits(s), 4);
  EXPECT_EQ(qsgdBits(1), 2);
  EXPECT_EQ(qsgdBits(127), 8);
  std::vector<float> norms1(buckets), norms(buckets);
  std::vector<uint8_t> packed1, packed;
  qsgdCodes(x, bucket, s, 77, norms1.data(), &packed1, 1);
  for (int threads : {2, 3}) {
    qsgdCodes(x, bucket, s, 77, norms.data(), &packed, threads);
    EXPECT_EQ(packed, packed1) << threads;
    EXPECT_EQ(norms, norms1) << threads;
  }
  const auto codes = qsgdCodes(x, bucket, s, 77, norms.data(), &packed);
  for (size_t g = 0; g < buckets; ++g) {
    double sq = 0;
    for (size_t i = g * bucket; i < std::min(n, (g + 1) * bucket); ++i) sq += double(x[i]) * x[i];
    ASSERT_NEAR(norms[g], std::sqrt(sq), 1e-6 * std::sqrt(sq) + 1e-30) << g;
  }
  EXPECT_EQ(norms[2], 0.f);
  std::vector<float> out(n);
  for (int threads : {1, 2}) {
    qsgdDecode(packed.data(), packed.size(), n, bucket, s, norms.data(), out.data(), threads);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LE(codes[i], 2 * s) << i;
      ASSERT_EQ(out[i], norms[i / bucket] * float(int(codes[i]) - s) / float(s)) << i;
      // ξ is floor(l) or floor(l) + 1 with the sign of x: never the other side of zero, never two levels away.
      const double l = norms[i / bucket] > 0 ? std::fabs(x[i]) * s / norms[i / bucket] : 0.0;
      const int q = int(codes[i]) - s;
      ASSERT_LE(std::fabs(std::fabs(double(q)) - l), 1.0 + 1e-5) << i;
      ASSERT_TRUE(q == 0 || (q > 0) == (x[i] > 0)) << i;
    }
  }
  EXPECT_EQ(codes[100], s);
  EXPECT_EQ(codes[101], s);
  auto bad = codes;
  bad[7] = uint8_t(2 * s + 1);  // representable in 4 bits, not a QSGD code
  packCodes(bad.data(), n, qsgdBits(s), packed.data());
  EXPECT_THROW(qsgdDecode(packed.data(), packed.size(), n, bucket, s, norms.data(), out.data()), KernelError);
  packCodes(codes.data(), n, qsgdBits(s), packed.data());
  EXPECT_THROW(qsgdDecode(packed.data(), packed.size() - 1, n, bucket, s, norms.data(), out.data()), KernelError);
  packed.back() |= 0xf0;  // n * 4 bits leave the last byte's high half unused
  EXPECT_THROW(qsgdDecode(packed.data(), packed.size(), n, bucket, s, norms.data(), out.data()), KernelError);
  EXPECT_THROW(qsgdEncode(x.data(), n, 0, s, 1, norms.data(), packed.data()), KernelError);
  EXPECT_THROW(qsgdEncode(x.data(), n, bucket, 128, 1, norms.data(), packed.data()), KernelError);
}

TEST(KernelsQsgd, UnbiasedAndSafeOnExtremesAndNonFiniteInput) {
  std::vector<float> x = {3.f, 0.5f, -1.25f, 0.1f, -0.01f, 0.f};
  const int s = 2;
  std::vector<double> mean(x.size(), 0.0);
  std::vector<uint8_t> packed;
  std::vector<float> out(x.size());
  float norm = 0;
  const int trials = 40000;  // per-element sd of the mean <= step / 2 / sqrt(trials) ~ 0.004
  for (int t = 0; t < trials; ++t) {
    qsgdCodes(x, x.size(), s, uint64_t(t), &norm, &packed);
    qsgdDecode(packed.data(), packed.size(), x.size(), x.size(), s, &norm, out.data());
    for (size_t i = 0; i < x.size(); ++i) mean[i] += out[i] / trials;
  }
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(mean[i], x[i], 0.02) << "element " << i;

  // An element holding its bucket's whole norm sits exactly on level s: always code 2s (or 0), decoded exactly.
  std::vector<float> one = {0.f, -5.f, 0.f, 0.f, 7.f, 0.f};
  std::vector<float> norms(2);
  const auto codes = qsgdCodes(one, 3, s, 1, norms.data(), &packed);
  EXPECT_EQ(codes[1], 0);
  EXPECT_EQ(codes[4], 2 * s);
  qsgdDecode(packed.data(), packed.size(), one.size(), 3, s, norms.data(), out.data());
  EXPECT_EQ(out, one);

  // The whole float range: squares of 1e20 overflow float and squares of 1e-25 flush to zero in it; the norms are
  // summed in double, so both buckets keep a finite, exact-enough norm and the largest element its top code.
  std::vector<float> wide = {3e20f, -1e20f, 2e-25f, -1e-25f};
  const auto wideCodes = qsgdCodes(wide, 2, s, 3, norms.data(), &packed);
  EXPECT_FLOAT_EQ(norms[0], float(std::sqrt(9e40 + 1e40)));
  EXPECT_FLOAT_EQ(norms[1], float(std::sqrt(4e-50 + 1e-50)));
  EXPECT_GE(wideCodes[0], s + 1);  // 3e20 / 3.16e20 * s: level 1.9 of 2, rounded to 1 or 2, never 0
  EXPECT_GE(wideCodes[2], s + 1);

  // Non-finite input (codecs refuse it before the kernel, as divergence): NaN shows in the norm, an infinite norm
  // saturates to FLT_MAX like any norm beyond float's range, and the codes stay valid.
  const auto badCodes = qsgdCodes({1.f, NAN, -INFINITY, 2.f}, 2, s, 9, norms.data());
  EXPECT_TRUE(std::isnan(norms[0]));
  EXPECT_EQ(norms[1], FLT_MAX);
  for (size_t i = 0; i < badCodes.size(); ++i) EXPECT_LE(badCodes[i], 2 * s) << i;
}

}  // namespace
}  // namespace ps::kernels
