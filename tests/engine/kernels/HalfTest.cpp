#include "engine/kernels/Half.h"
#include "engine/kernels/KernelError.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace ps::kernels {
namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Independent fp16 decoding by the definition.
double refHalfValue(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double mag = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

// Independent fp16 rounding: nearest of the finite positive halves, ties to the even code, >= 65520 -> inf.
uint16_t refToHalf(float f) {
  static const std::vector<double> halves = [] {
    std::vector<double> v;
    for (uint32_t h = 0; h <= 0x7bff; ++h) v.push_back(refHalfValue(uint16_t(h)));
    return v;
  }();
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(double(f));
  if (std::isnan(f)) return 0x7e00;  // only the class is compared for NaN
  if (a >= 65520.0) return sign | 0x7c00;
  if (a > 65504.0) return sign | 0x7bff;
  const size_t hi = size_t(std::lower_bound(halves.begin(), halves.end(), a) - halves.begin());
  if (hi < halves.size() && halves[hi] == a) return uint16_t(sign | hi);
  const size_t lo = hi - 1;
  const double dl = a - halves[lo], dh = halves[hi] - a;
  const size_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return uint16_t(sign | pick);
}

TEST(KernelsHalf, KnownFp16Values) {
  struct Case {
    float f;
    uint16_t h;
  };
  const Case cases[] = {
      {0.f, 0x0000},          {-0.f, 0x8000},          {1.f, 0x3c00},           {-2.f, 0xc000},
      {0.1f, 0x2e66},         {65504.f, 0x7bff},       {65519.99f, 0x7bff},     {65520.f, 0x7c00},  // tie -> even = inf
      {1e6f, 0x7c00},         {-1e6f, 0xfc00},         {INFINITY, 0x7c00},      {-INFINITY, 0xfc00},
      {std::ldexp(1.f, -14), 0x0400},                   {std::ldexp(1.f, -24), 0x0001},            // min normal, min subnormal
      {std::ldexp(1.f, -25), 0x0000},                   {std::ldexp(3.f, -26), 0x0001},            // tie -> 0; 0.75 -> 1
      {std::ldexp(3.f, -25), 0x0002},                   {std::ldexp(5.f, -25), 0x0002},            // 1.5 -> 2, 2.5 -> 2
      {1.f + std::ldexp(1.f, -11), 0x3c00},             {1.f + std::ldexp(3.f, -11), 0x3c02},      // ties to even
      {1.f + std::ldexp(1.f, -11) + std::ldexp(1.f, -20), 0x3c01},                                 // just above a tie
      {std::ldexp(1023.f, -24) + std::ldexp(1.f, -25), 0x0400},  // largest subnormal + half ulp -> min normal
      {1e-10f, 0x0000},       {FLT_MAX, 0x7c00},       {-std::ldexp(1.f, -149), 0x8000},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(floatToHalf(c.f), c.h) << c.f;
    EXPECT_EQ(refToHalf(c.f), c.h) << "reference disagrees for " << c.f;
  }
  const uint16_t nan = floatToHalf(NAN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_EQ(floatToHalf(-NAN) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(nan)));
  EXPECT_EQ(halfToFloat(uint16_t(0x0001)), std::ldexp(1.f, -24));
  EXPECT_EQ(halfToFloat(uint16_t(0x7bff)), 65504.f);
  EXPECT_EQ(halfToFloat(uint16_t(0xfc00)), -INFINITY);
}

TEST(KernelsHalf, Fp16ExhaustiveDecodeAndRandomEncode) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = halfToFloat(uint16_t(h));
    const double r = refHalfValue(uint16_t(h));
    if (std::isnan(r)) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_EQ(floatToHalf(f) & 0x7e00, 0x7e00);  // stays a (quiet) NaN
      continue;
    }
    ASSERT_EQ(double(f), r) << h;
    ASSERT_EQ(std::signbit(f), bool(h & 0x8000));
    ASSERT_EQ(floatToHalf(f), h) << "round trip " << h;
    // The midpoint to the next half up (same sign) is a tie; one float ulp either side is not.
    if ((h & 0x7fff) < 0x7bff) {
      const double mid = (r + refHalfValue(uint16_t(h + 1))) / 2;
      for (float v : {float(mid), std::nextafter(float(mid), 0.f), std::nextafter(float(mid), float(2 * mid))})
        ASSERT_EQ(floatToHalf(v), refToHalf(v)) << v;
    }
  }
  // The array versions (F16C where the CPU has it) agree with the scalar code on every half.
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = uint16_t(h);
  std::vector<float> decoded(65536);
  halfToFloat(all.data(), all.size(), decoded.data(), 1);
  for (uint32_t h = 0; h < 65536; ++h) ASSERT_EQ(bitsOf(decoded[h]), bitsOf(halfToFloat(uint16_t(h)))) << h;
  std::mt19937 g(1);
  std::vector<float> x(1 << 20);
  for (auto& v : x) v = fromBits(uint32_t(g()) & 0xbfffffffu);  // exponents up to ~2^1: the whole fp16 range
  std::vector<uint16_t> h(x.size());
  floatToHalf(x.data(), x.size(), h.data(), 2);
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isnan(x[i])) {
      ASSERT_EQ(h[i], refToHalf(x[i])) << x[i];
    }
}

TEST(KernelsHalf, Bf16KnownValuesAndTies) {
  struct Case {
    uint32_t f;
    uint16_t b;
  };
  const Case cases[] = {
      {0x3f800000, 0x3f80}, {0x3f808000, 0x3f80},  // 1 + 2^-8: tie -> even
      {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81},  // tie -> even (up); above a tie
      {0x3f807fff, 0x3f80}, {0x7f7fffff, 0x7f80},  // below a tie; FLT_MAX rounds to inf
      {0x7f800000, 0x7f80}, {0xff800000, 0xff80},  // ±inf
      {0x00008000, 0x0000}, {0x00018000, 0x0002},  // subnormal ties
      {0x80000000, 0x8000}, {0xc0490fdb, 0xc049},  // -0, -pi
  };
  for (const Case& c : cases) EXPECT_EQ(floatToBf16(fromBits(c.f)), c.b) << std::hex << c.f;
  for (uint32_t nanBits : {0x7fc00000u, 0x7f800001u, 0xffffffffu, 0x7f80ffffu}) {
    const uint16_t b = floatToBf16(fromBits(nanBits));
    EXPECT_TRUE(std::isnan(bf16ToFloat(b))) << std::hex << nanBits;
  }
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16ToFloat(uint16_t(b));
    ASSERT_EQ(bitsOf(f), b << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(floatToBf16(f), b);
    }
  }
}

// Both the portable loops and (where the CPU has it) F16C must match the scalar code bit for bit.
TEST(KernelsHalf, ArraysMatchScalarsForAnyThreadCount) {
  const size_t n = 300007;
  std::mt19937 g(2);
  std::vector<float> x(n);
  for (auto& v : x) v = fromBits(uint32_t(g()));
  struct Restore {
    ~Restore() { useF16c(true); }
  } restore;
  for (int threads : {1, 2, 3}) {
    const bool available = useF16c(threads != 3);  // 3 threads: the portable loops
    if (threads == 1) std::printf("  F16C %s\n", available ? "used" : "not available");
    std::vector<uint16_t> h(n), b(n);
    std::vector<float> fh(n), fb(n);
    floatToHalf(x.data(), n, h.data(), threads);
    floatToBf16(x.data(), n, b.data(), threads);
    halfToFloat(h.data(), n, fh.data(), threads);
    bf16ToFloat(b.data(), n, fb.data(), threads);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(h[i], floatToHalf(x[i]));
      ASSERT_EQ(b[i], floatToBf16(x[i]));
      ASSERT_EQ(bitsOf(fh[i]), bitsOf(halfToFloat(h[i])));
      ASSERT_EQ(bitsOf(fb[i]), uint32_t(b[i]) << 16);
    }
  }
  EXPECT_THROW(floatToHalf(nullptr, 3, nullptr), KernelError);
  floatToHalf(nullptr, 0, nullptr);  // nothing to do is fine
}

}  // namespace
}  // namespace ps::kernels
