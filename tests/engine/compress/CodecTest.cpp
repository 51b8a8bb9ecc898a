#include "engine/compress/Codec.h"
#include "engine/compress/QuantizeCodec.h"
#include "engine/compress/SparseCodec.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/errors/DivergedError.h"
#include "engine/kernels/Threshold.h"
#include "tests/engine/MemoryLimit.h"
#include "tests/engine/compress/CodecOptions.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <random>

namespace ps {
namespace {

using test::opts;

torch::Tensor roundTrip(Codec& c, const torch::Tensor& x) { return c.decode(c.encode(x), torch::kCPU); }

TEST(Codec, TopKKeepsExactlyTheLargestMagnitudesLikeTorchTopk) {
  torch::manual_seed(1);
  for (double K : {0.001, 0.01, 0.1, 0.5}) {
    for (bool ties : {false, true}) {
      auto x = ties ? torch::randint(-3, 4, {4096}).to(torch::kFloat32) : torch::randn({4096});
      auto codec = makeCodec(opts("topk", [&](auto& o) { o.k = K; }));
      auto y = roundTrip(*codec, x);
      const int64_t k = int64_t(sparseKeep(K, 4096));
      auto kept = y.ne(0).nonzero().squeeze(1);
      auto mask = y.ne(0) | x.eq(0);  // a kept zero looks like a dropped one
      // Every kept value is unchanged, and no dropped |x| beats a kept one.
      EXPECT_TRUE(torch::equal(y.masked_select(y.ne(0)), x.masked_select(y.ne(0))));
      const float kth = std::get<0>(x.abs().topk(k)).min().item<float>();
      EXPECT_EQ(x.abs().gt(kth).logical_and(y.eq(0)).sum().item<int64_t>(), 0) << "K=" << K;
      EXPECT_LE(kept.size(0), k);
      if (!ties) EXPECT_EQ(kept.size(0), k);
      // Ties at the threshold go to the lower indices: compare with a stable sort on (|x| desc, index asc).
      auto order = std::get<1>(torch::sort(x.abs(), /*stable=*/true, 0, /*descending=*/true));
      auto want = std::get<0>(order.slice(0, 0, k).sort());
      auto got = torch::zeros({4096}, torch::kBool);
      got.index_fill_(0, want, true);
      EXPECT_TRUE(torch::equal(y.ne(0), got.logical_and(x.ne(0)))) << "K=" << K << " ties=" << ties;
      (void)mask;
    }
  }
}

TEST(Codec, GaussianKCountLandsNearK) {
  torch::manual_seed(2);
  auto x = torch::randn({1 << 20});
  for (double K : {0.001, 0.01, 0.1}) {
    auto codec = makeCodec(opts("gaussiank", [&](auto& o) { o.k = K; }));
    auto p = codec->encode(x);
    const double k = double(sparseKeep(K, uint64_t(x.numel())));
    EXPECT_GE(double(p.values), 2 * k / 3) << K;
    EXPECT_LE(double(p.values), 4 * k / 3) << K;
    auto trimmed = makeCodec(opts("gaussiank", [&](auto& o) { o.k = K, o.trim = true; }))->encode(x);
    EXPECT_LE(double(trimmed.values), k);
  }
}

TEST(Codec, GaussianKGatherMatchesTheCountedThresholdEvenWhenRefined) {
  // Normal data takes the one-gather path; heavy-tailed data needs refinements and more room than 4k/3.
  torch::manual_seed(5);
  auto normal = torch::randn({1 << 16});
  auto heavy = torch::randn({1 << 16}).pow(5);
  for (const auto& x : {normal, heavy}) {
    for (double K : {0.01, 0.1}) {
      auto codec = makeCodec(opts("gaussiank", [&](auto& o) { o.k = K; }));
      auto y = roundTrip(*codec, x);
      size_t above = 0;
      const float t = kernels::gaussianThreshold(x.data_ptr<float>(), size_t(x.numel()), K, &above);
      EXPECT_TRUE(torch::equal(y, x * x.abs().gt(t))) << "K=" << K;
      EXPECT_EQ(y.ne(0).sum().item<int64_t>(), int64_t(above));
    }
  }
}

TEST(Codec, SampledThresholdTrimsToKWhenMoreThanFourThirdsSurvive) {
  CompressionOptions o;
  o.method = "sampledk";
  o.k = 0.01;
  o.sample = 0.001;  // 10 of 10000: the threshold is the largest of the sample, so about n / 11 survive it
  auto codec = makeCodec(o);
  torch::manual_seed(13);
  auto x = torch::randn({10000});
  auto y = codec->decode(codec->encode(x), torch::kCPU);
  EXPECT_EQ(y.ne(0).sum().item<int64_t>(), 100) << "DGC trims to k once more than 4k/3 pass the sampled threshold";
  // The 100 kept are the 100 largest.
  const float kth = std::get<0>(x.abs().topk(100)).min().item<float>();
  EXPECT_EQ(x.abs().ge(kth).logical_and(y.eq(0)).sum().item<int64_t>(), 0);
}

// At the default 1% sample the full k applied to the sample lets about 100 k through, and the trim keeps exactly the
// k largest: DGC's count is exact, not the noisy count of a threshold set by the sample's own k.
TEST(Codec, SampledThresholdAtTheDefaultSampleKeepsExactlyTheTopK) {
  torch::manual_seed(29);
  auto x = torch::randn({200000});
  for (double K : {0.001, 0.003}) {
    auto codec = makeCodec(opts("sampledk", [&](auto& o) { o.k = K; }));
    auto y = codec->decode(codec->encode(x), torch::kCPU);
    const int64_t k = int64_t(sparseKeep(K, uint64_t(x.numel())));
    EXPECT_EQ(y.ne(0).sum().item<int64_t>(), k) << K;
    const float kth = std::get<0>(x.abs().topk(k)).min().item<float>();
    EXPECT_EQ(x.abs().ge(kth).logical_and(y.eq(0)).sum().item<int64_t>(), 0) << K;
  }
}

TEST(Codec, NearestQuantizationIsWithinHalfAStep) {
  torch::manual_seed(3);
  auto x = torch::randn({3, 5, 7, 11}) * 4;
  for (int bits = 2; bits <= 8; ++bits)
    for (const char* scale : {"tensor", "bucket", "channel"}) {
      auto codec = makeCodec(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.bucket = 64; }));
      auto y = roundTrip(*codec, x);
      ASSERT_EQ(y.sizes(), x.sizes());
      // A group's step is its scale / 2^(b-1), the scale being max|x| stretched by 2^(b-1) / (2^(b-1) - 1) so the
      // maximum has a code (see ValueCoding.cpp): at most max|x| / (2^(b-1) - 1) over the whole tensor, plus
      // the fp16 rounding of the scale.
      const double step = x.abs().max().item<double>() / (std::pow(2.0, bits - 1) - 1) * 1.001;
      EXPECT_LE((y - x).abs().max().item<double>(), step / 2 + 1e-6) << bits << " bits " << scale;
    }
}

TEST(Codec, StochasticRoundingAndQsgdAreUnbiased) {
  torch::manual_seed(4);
  auto x = torch::randn({256});
  for (const auto& o : {opts("quantize", [](auto& o) { o.bits = 2, o.rounding = "stochastic"; }),
                        opts("qsgd", [](auto& o) { o.levels = 2; })}) {
    auto codec = makeCodec(o);
    auto sum = torch::zeros_like(x);
    const int trials = 3000;
    for (int t = 0; t < trials; ++t) sum += roundTrip(*codec, x);  // each message draws new random numbers
    auto mean = sum / trials;
    auto single = roundTrip(*codec, x);
    const double bias = (mean - x).abs().max().item<double>();
    const double noise = (single - x).abs().max().item<double>();
    EXPECT_LT(bias, noise / 8) << o.method;  // the mean converges; one draw is far off
  }
}

TEST(Codec, EveryCodecRoundTripsShapeAndNoneIsExact) {
  torch::manual_seed(5);
  auto x = torch::randn({4, 3, 5});
  EXPECT_TRUE(torch::equal(roundTrip(*makeCodec(opts("none")), x), x));
  for (const auto& spec : catalogue::codecs()) {  // every registered codec
    const std::string& m = spec.name;
    auto codec = makeCodec(opts(m));
    auto p = codec->encode(x);
    auto y = codec->decode(p, torch::kCPU);
    EXPECT_EQ(y.sizes(), x.sizes()) << m;
    EXPECT_TRUE(torch::isfinite(y).all().item<bool>()) << m;
    EXPECT_LT(((y - x).norm() / x.norm()).item<double>(), 1.5) << m;
  }
  // Sign keeps the signs and the mean magnitude.
  auto s = roundTrip(*makeCodec(opts("sign")), x);
  EXPECT_TRUE(torch::equal(s.sign(), x.sign()));
  EXPECT_NEAR(s.abs().mean().item<double>(), x.abs().mean().item<double>(), 1e-5);
  // Sparse values quantized again: 8-bit values cost a quarter of float32 ones.
  auto big = torch::randn({1 << 14});
  auto f32 = makeCodec(opts("topk"))->encode(big).size();
  auto q8 = makeCodec(opts("topk", [](auto& o) { o.value_bits = 8; }))->encode(big).size();
  EXPECT_LT(double(q8), 0.6 * double(f32));
}

// A payload names its codec by the id the codec's catalogue entry declares; codecs share an id only when they share
// the payload format, so either decodes the other's payloads.
TEST(Codec, PayloadsCarryTheirEntrysIdAndSharedIdsShareTheFormat) {
  torch::manual_seed(9);
  auto x = torch::randn({40, 50});
  for (const auto& a : catalogue::codecs()) {
    ASSERT_GT(a.payload, 0) << a.name;
    const Payload p = makeCodec(opts(a.name))->encode(x);
    size_t offset = 0;
    EXPECT_EQ(int(PayloadHeader::read(p.bytes, offset).codec), a.payload) << a.name;
    for (const auto& b : catalogue::codecs()) {
      if (b.payload != a.payload || b.name == a.name) continue;
      auto mine = makeCodec(opts(a.name))->decode(p, torch::kCPU);
      EXPECT_TRUE(torch::equal(makeCodec(opts(b.name))->decode(p, torch::kCPU), mine)) << a.name << " by " << b.name;
    }
  }
}

TEST(Codec, DecodersReuseTheirOutputOnlyWhenNobodyElseHoldsIt) {
  torch::manual_seed(6);
  auto x = torch::randn({64, 32}), z = torch::randn({64, 32});
  for (const char* m : {"fp16", "quantize", "topk", "gaussiank"}) {
    auto codec = makeCodec(opts(m));
    const auto px = codec->encode(x), pz = codec->encode(z);
    auto a = codec->decode(px, torch::kCPU);
    const auto aCopy = a.clone();
    a.requires_grad_(true);  // a flag the caller sets on its tensor
    auto b = codec->decode(pz, torch::kCPU);  // `a` is still held: b must not overwrite it
    EXPECT_NE(a.data_ptr(), b.data_ptr()) << m;
    EXPECT_TRUE(torch::equal(a.detach(), aCopy)) << m;
    const void* bData = b.data_ptr();
    b = torch::Tensor();  // released: the next decode may write into the same memory
    auto c = codec->decode(px, torch::kCPU);
    EXPECT_EQ(c.data_ptr(), bData) << m;
    EXPECT_FALSE(c.requires_grad()) << m;
    EXPECT_TRUE(torch::equal(c, aCopy)) << m;  // same payload, same result, whatever the buffer held before
    auto view = c.view({-1});                   // a view keeps the storage alive as well
    c = torch::Tensor();
    auto d = codec->decode(pz, torch::kCPU);
    EXPECT_NE(d.data_ptr(), view.data_ptr()) << m;
    EXPECT_TRUE(torch::equal(view, aCopy.view({-1}))) << m;
  }
}

TEST(Codec, MalformedPayloadsAreRejectedNeverCrash) {
  torch::manual_seed(6);
  auto x = torch::randn({8, 64});
  std::mt19937 rng(11);
  for (const char* m : {"none", "fp16", "bf16", "quantize", "qsgd", "sign", "topk", "randk", "gaussiank"}) {
    auto codec = makeCodec(opts(m, [](auto& o) { o.value_bits = 8; }));
    const Payload good = codec->encode(x);
    auto truncated = good;
    truncated.bytes.pop_back();
    EXPECT_THROW(codec->decode(truncated, torch::kCPU), PayloadError) << m;
    auto longer = good;
    longer.bytes.push_back(7);
    EXPECT_THROW(codec->decode(longer, torch::kCPU), PayloadError) << m;
    // Body mutations (a mutated shape is a well-formed payload of another shape: PayloadTest covers headers).
    const size_t header = 8 + 8 * 2;
    for (int i = 0; i < 1500; ++i) {
      Payload bad = good;
      for (int k = 0; k < 1 + int(rng() % 4); ++k)
        bad.bytes[header + rng() % (bad.bytes.size() - header)] ^= uint8_t(1 + rng() % 255);
      if (rng() % 5 == 0) bad.bytes.resize(rng() % bad.bytes.size());
      try {
        auto y = codec->decode(bad, torch::kCPU);
        EXPECT_LE(y.numel(), int64_t(1) << 31);
      } catch (const PayloadError&) {
      }
    }
  }
  // Another codec's payload is refused by the header check.
  auto topk = makeCodec(opts("topk"))->encode(x);
  EXPECT_THROW(makeCodec(opts("quantize"))->decode(topk, torch::kCPU), PayloadError);
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

// A quantize payload of a few bytes declaring 2^30 elements made the decoder allocate 4 GiB before it looked at the
// body; it is now refused from the body's length first, within a 256 MiB allowance.
TEST(Codec, AQuantizePayloadIsCheckedAgainstItsBodyBeforeTheOutputIsAllocated) {
  CompressionOptions o;
  o.method = "quantize";
  Payload p;
  PayloadHeader h;
  h.codec = payloadOf<QuantizeEntry>();
  h.shape = {int64_t(1) << 30};
  h.writeTo(p.bytes);
  for (uint8_t b : {uint8_t(1), uint8_t(8), uint8_t(0), uint8_t(0), uint8_t(2), uint8_t(0), uint8_t(0), uint8_t(0)})
    p.bytes.push_back(b);  // bucket mode, 8-bit values, max-abs, ...: and then nothing
  EXPECT_EXIT(
      {
        ps::test::limitMemoryGrowth(uint64_t(256) << 20);
        try {
          makeCodec(o)->decode(p, torch::kCPU);
        } catch (const PayloadError&) {
          std::_Exit(0);
        } catch (...) {
          std::_Exit(4);  // the allocation the header asked for failed first
        }
        std::_Exit(5);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

// A receiver that knows the shape it waits for refuses any other before reading the body, for every codec.
TEST(Codec, EveryDecoderRefusesAShapeOtherThanTheReceiverExpects) {
  torch::manual_seed(6);
  const auto x = torch::randn({64, 48});
  const std::vector<int64_t> right{64, 48}, transposed{48, 64}, flat{64 * 48};
  for (const auto& spec : catalogue::codecs()) {
    auto codec = makeCodec(opts(spec.name));
    const auto p = codec->encode(x);
    EXPECT_EQ(codec->decode(p, torch::kCPU, &right).sizes(), x.sizes()) << spec.name;
    for (const auto* wrong : {&transposed, &flat}) {
      try {
        codec->decode(p, torch::kCPU, wrong);
        ADD_FAILURE() << spec.name << " decoded a payload of another shape than the receiver expects";
      } catch (const PayloadError& e) {
        EXPECT_NE(std::string(e.what()).find("shape [64, 48] where the receiver expects"), std::string::npos)
            << spec.name << ": " << e.what();
      }
    }
  }
}

// A sparse or RandK payload of a few bytes may declare 2^31 elements, every one zero: 8 GiB of output and a 256 MiB
// bitmap. A receiver expecting 1000 elements refuses it having allocated nothing.
TEST(Codec, AHugeDeclaredSparseTensorIsRefusedByAReceiverExpectingItsOwnShape) {
  for (const std::string method : {"topk", "randk"}) {
    auto codec = makeCodec(opts(method));
    Payload p = codec->encode(torch::zeros({1000}));
    // Rewrite the one dimension to 2^31 (the header's own limit), keeping the tiny body.
    const uint64_t huge = uint64_t(1) << 31;
    for (int b = 0; b < 8; ++b) p.bytes[8 + size_t(b)] = uint8_t(huge >> (8 * b));
    const std::vector<int64_t> expected{1000};
    EXPECT_EXIT(
        {
          ps::test::limitMemoryGrowth(uint64_t(256) << 20);
          try {
            makeCodec(opts(method))->decode(p, torch::kCPU, &expected);
          } catch (const PayloadError& e) {
            std::_Exit(std::string(e.what()).find("expects [1000]") != std::string::npos ? 0 : 3);
          } catch (...) {
            std::_Exit(4);  // an allocation sized by the header failed first
          }
          std::_Exit(5);
        },
        ::testing::ExitedWithCode(0), "")
        << method;
  }
}

TEST(Codec, TheLargestPayloadBoundHoldsForEveryCodec) {
  torch::manual_seed(7);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1}, std::vector<int64_t>{3, 5}, std::vector<int64_t>{4096}}) {
    const auto x = torch::randn(shape);
    for (const auto& spec : catalogue::codecs())
      for (int bits : {1, 8}) {
        auto codec = makeCodec(opts(spec.name, [&](auto& o) { o.bits = bits, o.k = 1.0; }));
        EXPECT_LE(codec->encode(x).size(), maxPayloadBytes(shape)) << spec.name << " " << shapeText(shape);
      }
  }
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

// One finiteness rule for every codec: a sender never encodes inf or NaN (that is the run diverging, said at the
// sender), every decoder refuses them as malformed, and finite values at the edge of float's range travel as finite
// values (saturating where a format or a step cannot hold them).
// An empty tensor is refused at the encoder by every codec alike, saying so (a payload carries at least one element).
TEST(Codec, EveryCodecRefusesAnEmptyTensorAtEncodeSayingSo) {
  for (const auto& spec : catalogue::codecs())
    for (const auto& shape : {std::vector<int64_t>{0}, std::vector<int64_t>{4, 0, 3}}) {
      try {
        makeCodec(opts(spec.name))->encode(torch::zeros(shape));
        ADD_FAILURE() << spec.name << " encoded an empty tensor";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("an empty tensor"), std::string::npos) << spec.name << ": " << e.what();
      }
    }
}

TEST(Codec, NonFiniteInputIsDivergenceAtTheSenderForEveryCodec) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    auto x = torch::randn({256});
    x[17] = bad;
    for (const auto& spec : catalogue::codecs()) {
      try {
        makeCodec(opts(spec.name))->encode(x);
        ADD_FAILURE() << spec.name << " encoded a non-finite value";
      } catch (const DivergedError& e) {
        EXPECT_NE(std::string(e.what()).find("diverged: a tensor of shape [256]"), std::string::npos) << e.what();
      }
    }
  }
}

// TopK skips the pass over the whole tensor and checks only what it selected: an inf or NaN outranks every finite
// magnitude, so it is always selected. Held here on the sampled fast path (large n), with more non-finite values
// than k, at either end, and with -inf.
TEST(Codec, TopKFindsEveryNonFiniteInputThroughWhatItSelects) {
  const int64_t n = int64_t(1) << 18;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (double K : {1e-5, 0.01, 0.3})
    for (int64_t at : {int64_t(0), n / 3, n - 1})
      for (float bad : {inf, -inf, nan}) {
        auto x = torch::randn({n});
        x[at] = bad;
        if (at == n / 3) x.index_put_({torch::indexing::Slice(n / 2, n / 2 + 40)}, bad);  // more than k of them
        try {
          makeCodec(opts("topk", [&](auto& o) { o.k = K; }))->encode(x);
          ADD_FAILURE() << "K " << K << ": " << bad << " at " << at << " was encoded";
        } catch (const DivergedError& e) {
          EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
        }
      }
  auto x = torch::randn({n});
  EXPECT_NO_THROW(makeCodec(opts("topk", [](auto& o) { o.k = 0.01; }))->encode(x));
}

TEST(Codec, ExtremeFiniteValuesTravelAsFiniteValues) {
  auto x = torch::randn({512});
  x[0] = 3.0e38f, x[1] = -3.0e38f, x[2] = 1e5f;  // a min-max range above FLT_MAX; 1e5 is beyond fp16
  for (const auto& spec : catalogue::codecs())
    for (int bits : {1, 2, 8})
      for (const char* range : {"maxabs", "minmax"})
        for (const char* rounding : {"nearest", "stochastic"}) {
          auto codec = makeCodec(opts(spec.name, [&](auto& o) { o.bits = bits, o.range = range, o.rounding = rounding; }));
          torch::Tensor y;
          try {
            y = codec->decode(codec->encode(x), torch::kCPU);
          } catch (const std::exception& e) {
            ADD_FAILURE() << spec.name << " " << bits << " bits " << range << " " << rounding << ": " << e.what();
            continue;
          }
          EXPECT_TRUE(torch::isfinite(y).all().item<bool>()) << spec.name << " " << bits << " " << range;
        }
}

TEST(Codec, SparseValuesInFp16SaturateAsTheFp16CodecDoes) {
  // 1e5 and 7e4 lie beyond fp16's 65504: in a sparse payload's fp16 values they once travelled as inf, which every
  // decoder refuses, so the sender's own error feedback failed on them.
  auto x = torch::zeros({64});
  x[3] = 1e5f, x[9] = -7e4f, x[20] = 65504.f, x[40] = 1.f;
  for (const char* method : {"topk", "sampledk", "randk"}) {  // K = 1 keeps everything (GaussianK: about)
    auto codec = makeCodec(opts(method, [](auto& o) { o.k = 1.0, o.value_bits = 16; }));
    const auto y = codec->decode(codec->encode(x), torch::kCPU);
    EXPECT_EQ(y[3].item<float>(), 65504.f) << method;
    EXPECT_EQ(y[9].item<float>(), -65504.f) << method;
    EXPECT_EQ(y[20].item<float>(), 65504.f) << method;
    EXPECT_EQ(y[40].item<float>(), 1.f) << method;
  }
}

TEST(Codec, EveryDenseDecoderRefusesNonFiniteValues) {
  for (const char* method : {"none", "fp16", "bf16"}) {
    auto codec = makeCodec(opts(method));
    Payload p = codec->encode(torch::ones({4}));
    // The last value's bytes set to all ones in the exponent (and mantissa): NaN in every format.
    const size_t width = std::string(method) == "none" ? 4 : 2;
    for (size_t b = 0; b < width; ++b) p.bytes[p.bytes.size() - 1 - b] = 0xff;
    try {
      codec->decode(p, torch::kCPU);
      ADD_FAILURE() << method << " decoded a NaN";
    } catch (const PayloadError& e) {
      EXPECT_NE(std::string(e.what()).find("a value is not finite"), std::string::npos) << method << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace ps
