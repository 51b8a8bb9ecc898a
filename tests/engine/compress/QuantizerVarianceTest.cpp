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

TEST(QuantizerVariance, OmegaFollowsTheCodecsRealStepAndGroupSize) {
  // Max-abs, b >= 2: the scale is stretched by h / (h - 1) (h = 2^(b-1)), so h - 1 steps lie between 0 and max|x|:
  // omega = group / (4 (h - 1)^2). One bit: levels +-max|x|, omega = group.
  const std::vector<int64_t> flat = {4096};
  EXPECT_NEAR(makeCodec(quantize(2, "bucket", "maxabs"))->omega(flat), 512 / 4.0 * kWiden, 1e-9);
  EXPECT_NEAR(makeCodec(quantize(8, "bucket", "maxabs"))->omega(flat), 512 / (4.0 * 127 * 127) * kWiden, 1e-12);
  EXPECT_NEAR(makeCodec(quantize(1, "bucket", "maxabs"))->omega(flat), 512 * kWiden, 1e-9);
  EXPECT_NEAR(makeCodec(quantize(4, "bucket", "maxabs", 64))->omega(flat), 64 / (4.0 * 49) * kWiden, 1e-12);
  // A bucket larger than the tensor is one group of the tensor's size.
  EXPECT_NEAR(makeCodec(quantize(2, "bucket", "maxabs"))->omega({100}), 100 / 4.0 * kWiden, 1e-9);
  // Per tensor: the group is the tensor; per channel: the channel's values (dimension 1 of a 4-d activation).
  EXPECT_NEAR(makeCodec(quantize(2, "tensor", "maxabs"))->omega({10, 30}), 300 / 4.0 * kWiden, 1e-9);
  EXPECT_NEAR(makeCodec(quantize(3, "channel", "maxabs"))->omega({8, 16, 4, 4}), 128 / (4.0 * 9) * kWiden, 1e-9);
  EXPECT_NEAR(makeCodec(quantize(3, "channel", "maxabs"))->omega({8, 20}), 8 / (4.0 * 9) * kWiden, 1e-9);
  // Min-max: 2^b - 1 steps over a range of at most sqrt(2) |x_group|.
  EXPECT_NEAR(makeCodec(quantize(2, "bucket", "minmax"))->omega(flat), 512 * 2 / (4.0 * 9) * kWiden, 1e-9);
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
  EXPECT_NEAR(makeCodec(randk)->omega({400}), 4 * (1 + 16 / (4.0 * 49) * kWiden) - 1, 1e-9);
  randk.value_bits = 32;
  EXPECT_NEAR(makeCodec(randk)->omega({400}), 3.0, 1e-12);
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
