#include "engine/kernels/KernelError.h"
#include "engine/kernels/Quantize.h"

#include "tests/engine/kernels/KernelTestData.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace ps::kernels {
namespace {

struct Symmetric {
  std::vector<float> scales;
  std::vector<uint8_t> bytes;
  std::vector<float> out;
};

Symmetric roundTripSymmetric(const std::vector<float>& x, int bits, size_t group, Rounding r, uint64_t seed,
                             int threads) {
  const size_t n = x.size();
  Symmetric s;
  s.scales.resize(groupCount(n, group));
  groupMaxAbs(x.data(), n, group, s.scales.data(), threads);
  s.bytes.assign(packedBytes(n, bits), 0xAA);
  quantizePackSymmetric(x.data(), n, bits, group, s.scales.data(), r, seed, s.bytes.data(), threads);
  s.out.assign(n, NAN);
  unpackDequantizeSymmetric(s.bytes.data(), s.bytes.size(), n, bits, group, s.scales.data(), s.out.data(), threads);
  return s;
}

const size_t kGroups[] = {0 /* per tensor */, 512, 7, 33, 1000};

TEST(KernelsQuantize, SymmetricNearestWithinHalfAStep) {
  for (size_t n : {1, 5, 1000, 4099, 300001})
    for (size_t gsel : kGroups)
      for (int bits = 1; bits <= 8; ++bits) {
        const size_t group = gsel == 0 ? n : gsel;
        auto x = normalData(n, n * 8 + size_t(bits));
        if (n > 3) x[1] = 0.f, x[2] = -x[0];
        const auto s = roundTripSymmetric(x, bits, group, Rounding::Nearest, 0, 2);
        const double h = double(1 << (bits - 1));
        for (size_t i = 0; i < n; ++i) {
          const double sc = s.scales[i / group];
          const double err = std::fabs(double(x[i]) - double(s.out[i]));
          const double tol = 1e-6 * sc;  // float rounding of x * (h / s)
          if (bits == 1) {
            ASSERT_LE(err, sc / 2 + tol) << "bits=1 i=" << i;
            ASSERT_EQ(std::fabs(s.out[i]), float(sc / 2));
            continue;
          }
          const double step = sc / h;
          const double q = double(s.out[i]) / step;  // x̂ = q s / h (rounded to float), q an integer in [-h, h-1]
          ASSERT_NEAR(q, std::round(q), 1e-6 * h);
          ASSERT_GE(std::round(q), -h);
          ASSERT_LE(std::round(q), h - 1);
          if (x[i] <= sc - step / 2) ASSERT_LE(err, step / 2 + tol) << "bits=" << bits << " group=" << group << " i=" << i;
          else ASSERT_LE(err, step + tol);  // the clamped top half-cell (see Quantize.h)
        }
      }
}

// The symmetric code range is [-2^(b-1), 2^(b-1) - 1]: a positive group maximum has no code of its own
// and comes back one full step low. This pins that documented behaviour down.
TEST(KernelsQuantize, SymmetricTopValueIsClampedByTheFormula) {
  const std::vector<float> x = {1.f, -1.f, 0.25f, 0.f};
  const auto s = roundTripSymmetric(x, 2, 4, Rounding::Nearest, 0, 1);
  EXPECT_EQ(s.scales[0], 1.f);
  EXPECT_EQ(s.out[0], 0.5f);   // q = clamp(round(2), -2, 1) = 1 -> 0.5: error one step (0.5)
  EXPECT_EQ(s.out[1], -1.f);   // -s is exact
  EXPECT_EQ(s.out[2], 0.5f);   // 0.25 * 2 = 0.5 rounds half up to 1
  EXPECT_EQ(s.out[3], 0.f);    // zero is exact
  EXPECT_EQ(s.bytes[0], uint8_t(3 | 0 << 2 | 3 << 4 | 2 << 6));  // codes q + 2, LSB first
}

TEST(KernelsQuantize, MinMaxNearestWithinHalfAStep) {
  for (size_t n : {1, 5, 1000, 4099, 300001})
    for (size_t gsel : kGroups)
      for (int bits = 1; bits <= 8; ++bits) {
        const size_t group = gsel == 0 ? n : gsel;
        auto x = normalData(n, n * 9 + size_t(bits));
        for (auto& v : x) v = v * 3.f + 10.f;  // an offset, so min-max matters
        const size_t G = groupCount(n, group);
        std::vector<float> mins(G), maxs(G), out(n);
        groupMinMax(x.data(), n, group, mins.data(), maxs.data(), 2);
        std::vector<uint8_t> bytes(packedBytes(n, bits));
        quantizePackMinMax(x.data(), n, bits, group, mins.data(), maxs.data(), Rounding::Nearest, 0, bytes.data(), 2);
        unpackDequantizeMinMax(bytes.data(), bytes.size(), n, bits, group, mins.data(), maxs.data(), out.data(), 2);
        const double L = double((1 << bits) - 1);
        for (size_t i = 0; i < n; ++i) {
          const double lo = mins[i / group], hi = maxs[i / group];
          const double tol = 2e-6 * std::max(std::fabs(lo), std::fabs(hi));
          ASSERT_LE(std::fabs(double(x[i]) - double(out[i])), (hi - lo) / L / 2 + tol)
              << "bits=" << bits << " group=" << group << " i=" << i;
        }
      }
}

// Mean over 2000 seeds of the stochastically rounded value is within 5 standard errors of x, element by element.
TEST(KernelsQuantize, StochasticRoundingIsUnbiased) {
  const size_t n = 1000, seeds = 2000;
  std::mt19937_64 g(4);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int bits : {1, 2, 3, 4, 8})
    for (bool symmetric : {true, false}) {
      std::vector<float> x(n);
      for (auto& v : x) v = bits == 1 && symmetric ? u(g) * 0.5f : u(g);
      x[0] = 1.f, x[1] = -1.f;  // pin the scale / range to [-1, 1]
      const float scale = 1.f, lo = -1.f, hi = 1.f;
      const double step = symmetric ? (bits == 1 ? 1.0 : 1.0 / double(1 << (bits - 1))) : 2.0 / double((1 << bits) - 1);
      std::vector<double> sum(n, 0.0);
      std::vector<uint8_t> bytes(packedBytes(n, bits));
      std::vector<float> out(n);
      for (uint64_t seed = 0; seed < seeds; ++seed) {
        if (symmetric) {
          quantizePackSymmetric(x.data(), n, bits, n, &scale, Rounding::Stochastic, seed, bytes.data(), 1);
          unpackDequantizeSymmetric(bytes.data(), bytes.size(), n, bits, n, &scale, out.data(), 1);
        } else {
          quantizePackMinMax(x.data(), n, bits, n, &lo, &hi, Rounding::Stochastic, seed, bytes.data(), 1);
          unpackDequantizeMinMax(bytes.data(), bytes.size(), n, bits, n, &lo, &hi, out.data(), 1);
        }
        for (size_t i = 0; i < n; ++i) sum[i] += out[i];
      }
      double worst = 0;
      for (size_t i = 0; i < n; ++i) {
        if (symmetric && bits > 1 && x[i] > 1.f - float(step)) continue;  // clamped top cell: biased by design
        if (symmetric && bits == 1 && std::fabs(x[i]) > 0.5f) continue;   // outside the levels ±s/2
        const double mean = sum[i] / double(seeds);
        const double se = step * 0.5 / std::sqrt(double(seeds));  // p(1-p) <= 1/4
        worst = std::max(worst, std::fabs(mean - x[i]) / se);
        ASSERT_LE(std::fabs(mean - x[i]), 5 * se + 1e-6) << "bits=" << bits << " sym=" << symmetric << " i=" << i;
      }
      EXPECT_GT(worst, 0.5);  // it is actually random
    }
}

TEST(KernelsQuantize, ResultDoesNotDependOnThreadCount) {
  const size_t n = 600003;
  const auto x = normalData(n, 77);
  for (int bits : {1, 3, 4, 8})
    for (Rounding r : {Rounding::Nearest, Rounding::Stochastic})
      for (size_t group : {size_t(512), size_t(1001), n}) {
        const auto one = roundTripSymmetric(x, bits, group, r, 42, 1);
        for (int threads : {2, 3}) {
          const auto many = roundTripSymmetric(x, bits, group, r, 42, threads);
          ASSERT_EQ(one.scales, many.scales);
          ASSERT_EQ(one.bytes, many.bytes) << bits << " " << threads;
          ASSERT_EQ(0, std::memcmp(one.out.data(), many.out.data(), n * 4));
        }
      }
}

TEST(KernelsQuantize, GroupStatisticsMatchNaive) {
  for (size_t n : {1, 100, 600001})
    for (size_t group : {size_t(1), size_t(3), size_t(512), n, n + 10}) {
      auto x = normalData(n, n + group);
      const size_t G = groupCount(n, group);
      for (int threads : {1, 2}) {
        std::vector<float> s(G), mn(G), mx(G);
        groupMaxAbs(x.data(), n, group, s.data(), threads);
        groupMinMax(x.data(), n, group, mn.data(), mx.data(), threads);
        for (size_t gi = 0; gi < G; ++gi) {
          float a = 0, lo = INFINITY, hi = -INFINITY;
          for (size_t i = gi * group; i < std::min(n, (gi + 1) * group); ++i)
            a = std::max(a, std::fabs(x[i])), lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
          ASSERT_EQ(s[gi], a);
          ASSERT_EQ(mn[gi], lo);
          ASSERT_EQ(mx[gi], hi);
        }
      }
    }
  std::vector<float> y = {1.f, NAN, 2.f, -3.f};
  float s[2], mn[2], mx[2];
  groupMaxAbs(y.data(), 4, 2, s, 1);
  groupMinMax(y.data(), 4, 2, mn, mx, 1);
  EXPECT_TRUE(std::isnan(s[0]) && std::isnan(mn[0]) && std::isnan(mx[0]));
  EXPECT_EQ(s[1], 3.f);
  EXPECT_EQ(mn[1], -3.f);
  EXPECT_EQ(mx[1], 2.f);
  EXPECT_THROW(groupMaxAbs(y.data(), 4, 0, s, 1), KernelError);
}

TEST(KernelsQuantize, BitPackingMatchesNaiveBitWriter) {
  std::mt19937_64 g(8);
  for (int bits = 1; bits <= 8; ++bits)
    for (size_t count = 0; count <= 70; ++count) {
      std::vector<uint8_t> codes(count);
      for (auto& c : codes) c = uint8_t(g() & ((1u << bits) - 1));
      std::vector<uint8_t> ref(packedBytes(count, bits), 0);
      for (size_t i = 0; i < count; ++i)
        for (int b = 0; b < bits; ++b)
          if (codes[i] >> b & 1) ref[(i * size_t(bits) + size_t(b)) / 8] |= uint8_t(1u << ((i * size_t(bits) + size_t(b)) % 8));
      std::vector<uint8_t> packed(ref.size(), 0xFF), back(count);
      packCodes(codes.data(), count, bits, packed.data());
      ASSERT_EQ(packed, ref) << bits << " " << count;
      unpackCodes(packed.data(), count, bits, back.data());
      ASSERT_EQ(back, codes);
    }
  EXPECT_EQ(packedBytes(9, 3), 4u);
  EXPECT_THROW(packedBytes(1, 0), KernelError);
  EXPECT_THROW(packedBytes(1, 9), KernelError);
}

TEST(KernelsQuantize, DegenerateGroupsAndBadArguments) {
  std::vector<float> x = {0.f, 0.f, 0.f, 5.f, -5.f, 1.f, NAN, 1.f};
  float scales[3];
  groupMaxAbs(x.data(), 8, 3, scales, 1);
  std::vector<uint8_t> bytes(packedBytes(8, 4));
  std::vector<float> out(8);
  quantizePackSymmetric(x.data(), 8, 4, 3, scales, Rounding::Nearest, 0, bytes.data());
  unpackDequantizeSymmetric(bytes.data(), bytes.size(), 8, 4, 3, scales, out.data());
  EXPECT_EQ(out[0], 0.f);  // a zero scale decodes to exact zeros
  EXPECT_EQ(out[2], 0.f);
  EXPECT_EQ(out[4], -5.f);
  EXPECT_TRUE(std::isnan(out[6]) && std::isnan(out[7]));  // a NaN makes its group NaN, and only its group
  const float mn = 2.f, mx = 2.f, one = 1.f;
  const std::vector<float> c = {2.f, 2.f, 2.f};
  quantizePackMinMax(c.data(), 3, 3, 3, &mn, &mx, Rounding::Stochastic, 1, bytes.data());
  unpackDequantizeMinMax(bytes.data(), 2, 3, 3, 3, &mn, &mx, out.data());
  EXPECT_EQ(out[0], 2.f);
  EXPECT_EQ(out[2], 2.f);
  // Decoders: too few bytes, non-zero padding bits; encoders: bad bits, group 0, null pointers.
  EXPECT_THROW(unpackDequantizeSymmetric(bytes.data(), 1, 8, 4, 8, &one, out.data()), KernelError);
  uint8_t pad[1] = {0x80};
  EXPECT_THROW(unpackDequantizeSymmetric(pad, 1, 7, 1, 7, &one, out.data()), KernelError);
  EXPECT_THROW(unpackDequantizeMinMax(pad, 1, 1, 7, 1, &mn, &mx, out.data()), KernelError);
  EXPECT_THROW(quantizePackSymmetric(x.data(), 8, 0, 8, &one, Rounding::Nearest, 0, bytes.data()), KernelError);
  EXPECT_THROW(quantizePackSymmetric(x.data(), 8, 9, 8, &one, Rounding::Nearest, 0, bytes.data()), KernelError);
  EXPECT_THROW(quantizePackSymmetric(x.data(), 8, 4, 0, &one, Rounding::Nearest, 0, bytes.data()), KernelError);
  EXPECT_THROW(quantizePackSymmetric(x.data(), 8, 4, 8, nullptr, Rounding::Nearest, 0, bytes.data()), KernelError);
  EXPECT_THROW(unpackDequantizeSymmetric(nullptr, 4, 8, 4, 8, &one, out.data()), KernelError);
  // Garbage scales (inf, NaN, negative, subnormal) from an untrusted payload: no UB, no crash.
  const float weird[] = {INFINITY, NAN, -2.f, 1e-45f};
  std::vector<uint8_t> any(packedBytes(8, 5), 0x5A);
  any.back() &= 0x1F;
  for (float w : weird) {
    unpackDequantizeSymmetric(any.data(), any.size(), 8, 5, 8, &w, out.data());
    quantizePackSymmetric(x.data(), 8, 5, 8, &w, Rounding::Stochastic, 3, any.data());
  }
}

}  // namespace
}  // namespace ps::kernels

namespace ps::kernels {
namespace {

// Codes and decoded values are part of the wire format and of the sender/receiver agreement (EF21, DIANA): they
// must not depend on which SIMD path the CPU takes (Simd.h). The same fingerprint is checked by test_kernels (AVX2
// clones where the CPU has them) and test_kernels_baseline (SSE2 only), over data made from integers alone so no
// library's random distributions enter. A change here is a wire-format change and must be deliberate.
uint64_t fnv1a(const void* p, size_t bytes, uint64_t h = 1469598103934665603ull) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

TEST(KernelsQuantize, CodesAndValuesAreTheSameOnEverySimdPath) {
  const size_t n = (size_t(1) << 19) + 37, group = 512;  // parallel path, a partial last group
  std::vector<float> x(n);
  uint64_t s = 12345;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = float(int32_t(s >> 33) % 20001 - 10000) * (i % 3 == 0 ? 1e-3f : 3.7e-5f);
  }
  x[1000] = 0.f, x[1001] = -0.f;
  const size_t groups = (n + group - 1) / group;
  std::vector<float> scales(groups), lo(groups), hi(groups), out(n);
  groupMaxAbs(x.data(), n, group, scales.data());
  groupMinMax(x.data(), n, group, lo.data(), hi.data());
  uint64_t h = fnv1a(scales.data(), groups * 4);
  h = fnv1a(lo.data(), groups * 4, fnv1a(hi.data(), groups * 4, h));
  for (int bits : {1, 2, 3, 4, 8})
    for (Rounding r : {Rounding::Nearest, Rounding::Stochastic}) {
      std::vector<uint8_t> codes(packedBytes(n, bits));
      quantizePackSymmetric(x.data(), n, bits, group, scales.data(), r, 99, codes.data());
      unpackDequantizeSymmetric(codes.data(), codes.size(), n, bits, group, scales.data(), out.data());
      h = fnv1a(out.data(), n * 4, fnv1a(codes.data(), codes.size(), h));
      quantizePackMinMax(x.data(), n, bits, group, lo.data(), hi.data(), r, 99, codes.data());
      unpackDequantizeMinMax(codes.data(), codes.size(), n, bits, group, lo.data(), hi.data(), out.data());
      h = fnv1a(out.data(), n * 4, fnv1a(codes.data(), codes.size(), h));
    }
  EXPECT_EQ(h, 0x17afad5510b50648ull) << std::hex << "fingerprint 0x" << h;
}

}  // namespace
}  // namespace ps::kernels

namespace ps::kernels {
namespace {

TEST(KernelsQuantize, AllFiniteFindsEveryNonFiniteValueAnywhere) {
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(33), size_t(100001)}) {
    std::vector<float> x(n, 1.f);
    if (n) x[n - 1] = FLT_MAX, x[0] = -FLT_MIN / 4;  // the largest finite and a denormal stay finite
    EXPECT_TRUE(allFinite(x.data(), n)) << n;
    for (float bad : {INFINITY, -INFINITY, NAN, -NAN})
      for (size_t at : {size_t(0), n / 2, n ? n - 1 : 0}) {
        if (at >= n) continue;
        const float keep = x[at];
        x[at] = bad;
        EXPECT_FALSE(allFinite(x.data(), n)) << n << " " << at;
        x[at] = keep;
      }
  }
}

}  // namespace
}  // namespace ps::kernels
