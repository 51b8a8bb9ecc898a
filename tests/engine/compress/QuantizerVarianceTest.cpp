// The quantizer's stated variance bound omega (what DIANA's default step 1 / (omega + 1) rests on) against the
// codec's real behaviour, and the unbiasedness of stochastic rounding at every width.
#include "engine/compress/Codec.h"
#include "engine/compress/SparseCodec.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ps {
namespace {

CompressionOptions quantize(int bits, const std::string& scale, const std::string& range, int64_t bucket = 512) {
  CompressionOptions o;
  o.method = "quantize";
  o.bits = bits;
  o.scale = scale;
  o.range = range;
  o.bucket = bucket;
  o.rounding = "stochastic";
  return o;
}

const double kWiden = (1 + std::ldexp(1.0, -10)) * (1 + std::ldexp(1.0, -10));  // fp16 scales rounded outwards

// omega from its closed form: the supremum of m f(1 - f) / (L² + m f²) over f, for L steps between zero and the
// group's maximum and m other elements (widening of fp16 scales aside, which the codec's value adds on top).
double worstCase(double d, double L) {
  const double m = d - 1, f = L * (std::sqrt(L * L + m) - L) / m;
  return m * f * (1 - f) / (L * L + m * f * f);
}

TEST(QuantizerVariance, OmegaFollowsTheCodecsRealStepAndGroupSize) {
  // Max-abs, b >= 2: the scale is stretched by h / (h - 1) (h = 2^(b-1)), so the maximum sits on level h - 1.
  const std::vector<int64_t> flat = {4096};
  const double widen = 1.005;  // fp16 scales rounded outwards: a few parts in a thousand on small groups
  auto near = [&](double got, double want) {
    EXPECT_GE(got, want);
    EXPECT_LE(got, want * widen);
  };
  near(makeCodec(quantize(2, "bucket", "maxabs"))->omega(flat), worstCase(512, 1));
  EXPECT_NEAR(worstCase(512, 1), 10.81, 0.01) << "not d / (4 L²) = 128";
  near(makeCodec(quantize(3, "bucket", "maxabs"))->omega(flat), worstCase(512, 3));
  near(makeCodec(quantize(8, "bucket", "maxabs"))->omega(flat), worstCase(512, 127));
  near(makeCodec(quantize(4, "bucket", "maxabs", 64))->omega(flat), worstCase(64, 7));
  // One bit: levels ±max|x|, an element at zero has variance max²: omega = d - 1.
  near(makeCodec(quantize(1, "bucket", "maxabs"))->omega(flat), 511);
  // A bucket larger than the tensor is one group of the tensor's size.
  near(makeCodec(quantize(2, "bucket", "maxabs"))->omega({100}), worstCase(100, 1));
  // Per tensor: the group is the tensor; per channel: the channel's values (dimension 1 of a 4-d activation).
  near(makeCodec(quantize(2, "tensor", "maxabs"))->omega({10, 30}), worstCase(300, 1));
  near(makeCodec(quantize(3, "channel", "maxabs"))->omega({8, 16, 4, 4}), worstCase(128, 3));
  near(makeCodec(quantize(3, "channel", "maxabs"))->omega({8, 20}), worstCase(8, 3));
  // Min-max: the extremes at ±a, the rest at zero, a step's midpoint: (d - 2) / (2 (2^b - 1)²).
  near(makeCodec(quantize(2, "bucket", "minmax"))->omega(flat), 510 / (2.0 * 9));
  // Nearest rounding is biased: no omega (DIANA then uses alpha 1).
  auto nearest = quantize(4, "bucket", "maxabs");
  nearest.rounding = "nearest";
  EXPECT_EQ(makeCodec(nearest)->omega(flat), -1);
  // Unbiased RandK with stochastically quantized values: (1 + omega_R)(1 + omega_Q) - 1.
  CompressionOptions randk = quantize(4, "bucket", "maxabs", 16);
  randk.method = "randk";
  randk.k = 0.25;
  randk.scaled = true;
  randk.value_bits = 4;
  const double q = makeCodec(quantize(4, "bucket", "maxabs", 16))->omega({400});
  EXPECT_NEAR(makeCodec(randk)->omega({400}), 4 * (1 + q) - 1, 1e-9);
  randk.value_bits = 32;
  EXPECT_NEAR(makeCodec(randk)->omega({400}), 3.0, 1e-12);
}

// The mean relative variance of `trials` round trips of x.
double measuredVariance(Codec& codec, const torch::Tensor& x, int trials) {
  double sum = 0;
  const double norm = x.pow(2).sum().item<double>();
  for (int t = 0; t < trials; ++t) sum += (codec.decode(codec.encode(x), torch::kCPU) - x).pow(2).sum().item<double>();
  return sum / trials / norm;
}

// omega is a supremum, not a convenient bound: no input exceeds it (up to the sampling error of the mean), and an
// adversary gets within 10% of it. The adversaries: random vectors of several shapes, and the structured worst cases
// the derivation names (the maximum on its level and the rest at one fraction of the first step; for min-max the
// extremes at ±a and the rest at zero; for QSGD every |x_i| equal, or on half-integers of |x| / s).
TEST(QuantizerVariance, OmegaIsTheSupremumAnAdversaryReaches) {
  const int64_t d = 512;
  const int trials = 300;
  torch::manual_seed(31);
  std::vector<torch::Tensor> random = {torch::randn({d}), torch::rand({d}), torch::randn({d}).pow(3),
                                       torch::randn({d}) * torch::rand({d}).lt(0.05)};
  random.back()[0] = 1;  // a sparse vector is not all zero
  auto check = [&](const CompressionOptions& o, const std::vector<torch::Tensor>& structured, const std::string& what) {
    auto codec = makeCodec(o);
    const double omega = codec->omega({d});
    ASSERT_GT(omega, 0) << what;
    double best = 0;
    for (const auto& inputs : {random, structured})
      for (const auto& x : inputs) {
        const double v = measuredVariance(*codec, x, trials);
        EXPECT_LE(v, omega * 1.03) << what << ": an input above the declared omega";
        best = std::max(best, v);
      }
    EXPECT_GE(best, 0.9 * omega) << what << ": omega " << omega << " is not approached (best " << best << ")";
  };
  for (int bits = 1; bits <= 8; ++bits) {
    // Max-abs: the maximum 1 on its level, the other d - 1 at fractions f of the first step around the worst one.
    const double h = std::ldexp(1.0, bits - 1), step = bits == 1 ? 2.0 : 1.0 / (h - 1);
    std::vector<torch::Tensor> structured;
    if (bits == 1) {
      auto x = torch::zeros({d});  // levels ±1: zero is the midpoint of the one step
      x[0] = 1;
      structured.push_back(x);
    } else {
      const double L = h - 1, m = double(d - 1), f = L * (std::sqrt(L * L + m) - L) / m;
      for (double scale : {0.5, 1.0, 2.0}) {
        auto x = torch::full({d}, float(std::min(1.0, scale * f) * step));
        x[0] = 1;
        structured.push_back(x);
      }
    }
    check(quantize(bits, "tensor", "maxabs"), structured, std::to_string(bits) + "-bit max-abs");
    if (bits >= 2) {
      auto x = torch::zeros({d});
      x[0] = 1, x[1] = -1;
      check(quantize(bits, "tensor", "minmax"), {x}, std::to_string(bits) + "-bit min-max");
    }
  }
  for (int levels : {1, 2, 4, 16}) {
    CompressionOptions o;
    o.method = "qsgd";
    o.levels = levels;
    o.bucket = d;
    auto equal = torch::ones({d});
    auto halves = torch::full({d}, 0.5f);  // |x_i| s / |x| on half-integers: 448 at 1/2, 64 at 3/2 (s = 16)
    halves.narrow(0, 0, 64).fill_(1.5f);
    check(o, {equal, halves}, "qsgd s=" + std::to_string(levels));
  }
}

// Vectors the bound must hold on: normal, heavy-tailed (Cauchy), and one spike among tiny values, which makes the
// small elements' relative error large.
std::vector<torch::Tensor> testVectors(const std::vector<int64_t>& shape) {
  torch::manual_seed(11);
  auto normal = torch::randn(shape);
  auto cauchy = torch::randn(shape) / torch::randn(shape);
  auto spike = torch::randn(shape) * 1e-2;
  spike.view(-1)[0] = 50;
  return {normal, cauchy, spike};
}

TEST(QuantizerVariance, MeasuredVarianceNeverExceedsTheStatedOmega) {
  const int trials = 40;
  for (const std::string range : {"maxabs", "minmax"})
    for (const std::string scale : {"tensor", "channel", "bucket"})
      for (int64_t bucket : {4, 64})
        for (int bits = 1; bits <= 8; ++bits) {
          if (scale != "bucket" && bucket != 4) continue;
          const std::vector<int64_t> shape =
              scale == "tensor" ? std::vector<int64_t>{24} : std::vector<int64_t>{2, 6, 2, 2};
          auto codec = makeCodec(quantize(bits, scale, range, bucket));
          const double omega = codec->omega(shape);
          ASSERT_GE(omega, 0) << bits << " bits " << range << " " << scale;
          int which = 0;
          for (const auto& x : testVectors(shape)) {
            double sum = 0;
            for (int t = 0; t < trials; ++t) {
              auto y = codec->decode(codec->encode(x), torch::kCPU);
              sum += (y - x).pow(2).sum().item<double>() / x.pow(2).sum().item<double>();
            }
            EXPECT_LE(sum / trials, omega)
                << bits << " bits " << range << " " << scale << " bucket " << bucket << " vector " << which;
            ++which;
          }
        }
}

TEST(QuantizerVariance, StochasticRoundingIsUnbiasedAtEveryWidth) {
  torch::manual_seed(12);
  auto x = torch::randn({256});
  x[0] = 3, x[1] = -3.5;  // the group's extremes: the largest magnitude and (min-max) both ends of the range
  const int trials = 4000;
  for (const std::string range : {"maxabs", "minmax"})
    for (int bits = 1; bits <= 8; ++bits) {
      auto codec = makeCodec(quantize(bits, "tensor", range));
      auto sum = torch::zeros_like(x);
      for (int t = 0; t < trials; ++t) sum += codec->decode(codec->encode(x), torch::kCPU);
      const double s = 3.5, h = std::ldexp(1.0, bits - 1);
      const double step = range == "minmax" ? 6.5 / (std::ldexp(1.0, bits) - 1) : bits == 1 ? 2 * s : s / (h - 1);
      // Each element's mean of `trials` draws has a standard deviation of at most step / 2 / sqrt(trials).
      const double bias = ((sum / trials) - x).abs().max().item<double>();
      EXPECT_LE(bias, 6 * step / 2 / std::sqrt(double(trials))) << bits << " bits " << range;
    }
}

}  // namespace
}  // namespace ps
