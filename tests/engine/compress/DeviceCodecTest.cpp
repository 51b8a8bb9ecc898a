// Codecs on a GPU against the same codecs on the CPU: byte-identical payloads (every selector, value width, bit width
// and scale mode), the same refusal of non-finite input, payloads decoded on the other side of a CPU/GPU boundary, and
// error-compensation state kept on the device. Skipped, with the reason, where there is no usable GPU (a LibTorch
// without CUDA, no driver, or a build without the CUDA kernels).
#include "engine/compress/Codec.h"
#include "engine/compress/Compensation.h"
#include "engine/compress/TensorKernels.h"
#include "engine/errors/DivergedError.h"
#include "engine/tensors/DeviceChecks.h"

#include "tests/engine/compress/CodecOptions.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace ps {
namespace {

using test::opts;

class DeviceCodecs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "this LibTorch sees no CUDA device; run on a GPU machine";
    std::string why;
    if (!TensorKernels::usable(torch::zeros({1}, torch::kCUDA), &why)) GTEST_SKIP() << why;
  }

  // Activations (4-d, channels), a weight gradient (2-d) and an odd length, with heavy tails and ties.
  static std::vector<torch::Tensor> inputs() {
    torch::manual_seed(11);
    auto tails = torch::randn({300, 1000});
    tails.view(-1).slice(0, 0, 300000, 97).fill_(1.5f);
    tails.view(-1).slice(0, 5, 300000, 1009).mul_(40.f);
    return {torch::randn({8, 16, 12, 12}), tails, torch::randn({100003}) * 1e-3f};
  }

  // Fresh codecs from the same options and context on each side, so their random streams agree.
  static void expectSameBytes(const CompressionOptions& o, const torch::Tensor& x, int messages = 2) {
    CodecContext context{7, 1, 0};
    auto cpu = makeCodec(o, context), gpu = makeCodec(o, context);
    const auto onGpu = x.to(torch::kCUDA);
    for (int m = 0; m < messages; ++m) {
      const Payload a = cpu->encode(x), b = gpu->encode(onGpu);
      ASSERT_EQ(a.bytes, b.bytes) << cpu->describe() << " on " << c10::str(x.sizes()) << ", message " << m;
      EXPECT_EQ(a.values, b.values);
    }
  }
};

TEST_F(DeviceCodecs, SparsePayloadsAreByteIdenticalToTheCpu) {
  for (const auto& x : inputs())
    for (double K : {0.001, 0.01, 0.3, 1.0})
      for (int bits : {32, 16, 8, 3, 1}) {
        SCOPED_TRACE("K=" + std::to_string(K) + " value_bits=" + std::to_string(bits));
        expectSameBytes(opts("topk", [&](auto& o) { o.k = K, o.value_bits = bits; }), x);
        expectSameBytes(opts("randk", [&](auto& o) { o.k = K, o.value_bits = bits; }), x);
        expectSameBytes(opts("randk", [&](auto& o) { o.k = K, o.value_bits = bits, o.scaled = true; }), x);
        expectSameBytes(opts("sampledk", [&](auto& o) { o.k = K, o.value_bits = bits; }), x);
        expectSameBytes(opts("sampledk", [&](auto& o) { o.k = K, o.value_bits = bits, o.sample = 1.0; }), x);
      }
}

TEST_F(DeviceCodecs, QuantizedPayloadsAreByteIdenticalToTheCpu) {
  for (const auto& x : inputs())
    for (int bits = 1; bits <= 8; ++bits)
      for (const char* scale : {"tensor", "bucket", "channel"}) {
        SCOPED_TRACE(std::string(scale) + " " + std::to_string(bits) + " bits");
        expectSameBytes(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.bucket = 100; }), x);
        // Min-max and stochastic rounding go through the host on a GPU: the same bytes all the same.
        expectSameBytes(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.range = "minmax"; }), x);
        expectSameBytes(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.rounding = "stochastic"; }),
                        x);
      }
}

// GaussianK's first threshold comes from the device's moments (a float reduction in another order than the CPU's),
// so its bytes may differ in the last bit of the threshold; what it selects is still a threshold selection with the
// CPU's refinement rule: every selected magnitude above every one left out, and as many as the CPU keeps, give or
// take what one rounding of the threshold moves.
TEST_F(DeviceCodecs, GaussianKOnTheDeviceSelectsAboveAThresholdLikeTheCpu) {
  for (const auto& x : inputs())
    for (double K : {0.001, 0.01, 0.1}) {
      CodecContext context{7, 1, 0};
      auto cpu = makeCodec(opts("gaussiank", [&](auto& o) { o.k = K; }), context);
      auto gpu = makeCodec(opts("gaussiank", [&](auto& o) { o.k = K; }), context);
      const Payload a = cpu->encode(x), b = gpu->encode(x.to(torch::kCUDA));
      const auto decoded = cpu->decode(b, torch::kCPU).abs().view(-1);
      const auto kept = decoded != 0, magnitudes = x.abs().view(-1);
      ASSERT_GT(kept.sum().item<int64_t>(), 0);
      EXPECT_GT(magnitudes.masked_select(kept).min().item<float>(),
                magnitudes.masked_select(~kept).max().item<float>());
      EXPECT_NEAR(double(b.values), double(a.values), 0.01 * double(a.values) + 2) << "K=" << K;
    }
}

TEST_F(DeviceCodecs, NonFiniteInputIsRefusedOnTheDeviceAsOnTheCpu) {
  for (const char* method : {"topk", "gaussiank", "sampledk", "randk", "quantize"})
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      auto x = torch::randn({1000});
      x[417] = bad;
      auto codec = makeCodec(opts(method));
      EXPECT_THROW(codec->encode(x), DivergedError) << method;
      EXPECT_THROW(codec->encode(x.to(torch::kCUDA)), DivergedError) << method << " on the GPU";
    }
}

// Under a stage's deferred reads the checks of a message between GPU stages (nothing non-finite sent, the payload's
// values finite and its indices well formed) wait on the device for the step's end: none is read as it is made, a
// NaN is still refused as divergence, and a spoiled index block decodes inside the tensor and is refused when read.
TEST_F(DeviceCodecs, ChecksOnTheDeviceWaitForTheStepsEnd) {
  const auto x = torch::randn({8, 16, 12, 12}).to(torch::kCUDA);
  for (const auto& o : {opts("none"), opts("fp16"), opts("topk", [](auto& q) { q.k = 0.05; }),
                        opts("topk", [](auto& q) { q.k = 0.6; }), opts("gaussiank", [](auto& q) { q.k = 0.01; })}) {
    auto sender = makeCodec(o), receiver = makeCodec(o);
    sender->setResidence(Codec::Residence::Device);
    SCOPED_TRACE(sender->describe());
    const auto before = deviceCheckTally();
    {
      DeferredChecks checks;
      const Payload p = sender->encode(x);
      ASSERT_TRUE(p.tail.defined());
      EXPECT_TRUE(receiver->decode(p, torch::kCUDA).is_cuda());
      EXPECT_GT(checks.pending(), 0u);
      EXPECT_NO_THROW(checks.settle());
    }
    EXPECT_EQ(deviceCheckTally().readAtOnce, before.readAtOnce);

    auto bad = x.clone();
    bad.view(-1)[5] = NAN;
    DeferredChecks checks;
    EXPECT_NO_THROW(sender->encode(bad));
    EXPECT_THROW(checks.settle(), DivergedError);
  }
  // An index block whose first gap is 0 (TopK 5% writes varint gaps here).
  auto codec = makeCodec(opts("topk", [](auto& q) { q.k = 0.05; }));
  codec->setResidence(Codec::Residence::Device);
  Payload p = codec->encode(x);
  p.tail = p.tail.clone();
  p.tail[0] = 0;
  DeferredChecks checks;
  torch::Tensor decoded;
  ASSERT_NO_THROW(decoded = codec->decode(p, torch::kCUDA));
  EXPECT_EQ(decoded.sizes(), x.sizes());
  EXPECT_THROW(checks.settle(), PayloadError);
}

TEST_F(DeviceCodecs, PayloadsCrossBetweenACpuStageAndAGpuStage) {
  const auto x = torch::randn({8, 16, 12, 12});
  for (const auto& o : {opts("topk"), opts("randk"), opts("sampledk"), opts("gaussiank"), opts("quantize"),
                        opts("quantize", [](auto& o) { o.bits = 3, o.scale = "channel"; }),
                        opts("topk", [](auto& o) { o.value_bits = 4; })}) {
    auto codec = makeCodec(o);
    SCOPED_TRACE(codec->describe());
    const Payload fromCpu = codec->encode(x);
    const auto onCpu = codec->decode(fromCpu, torch::kCPU), onGpu = codec->decode(fromCpu, torch::kCUDA);
    EXPECT_TRUE(onGpu.is_cuda());
    EXPECT_TRUE(torch::equal(onGpu.cpu(), onCpu));
    const Payload fromGpu = makeCodec(o)->encode(x.to(torch::kCUDA));
    EXPECT_TRUE(torch::equal(codec->decode(fromGpu, torch::kCUDA).cpu(), codec->decode(fromGpu, torch::kCPU)));
  }
}

TEST_F(DeviceCodecs, PayloadsBetweenGpusOfOneProcessMoveDeviceToDevice) {
  // Residence::Device: the bulk stays on the sending GPU (Payload::tail), the receiver copies it to its own device
  // (a peer copy between two GPUs) and decodes it there. The bytes are those the same GPU writes for the host, which
  // are the CPU's (GaussianK's first threshold comes from the GPU's moments: compared with the GPU's host path only).
  const int gpus = int(torch::cuda::device_count());
  if (gpus < 2) std::cout << "[   INFO   ] one GPU: the tails are decoded on it; peer copies need two\n";
  const torch::Device receiver(torch::kCUDA, gpus >= 2 ? 1 : 0);
  std::vector<CompressionOptions> all = {opts("none"), opts("fp16"), opts("bf16")};
  for (int bits : {1, 2, 4, 8})
    for (const char* scale : {"tensor", "bucket", "channel"})
      all.push_back(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.bucket = 100; }));
  for (double K : {0.001, 0.05, 0.3, 1.0})
    for (int bits : {32, 16, 8, 3}) {
      all.push_back(opts("topk", [&](auto& o) { o.k = K, o.value_bits = bits; }));
      all.push_back(opts("gaussiank", [&](auto& o) { o.k = K, o.value_bits = bits, o.trim = true; }));
      all.push_back(opts("sampledk", [&](auto& o) { o.k = K, o.value_bits = bits; }));
    }
  for (const auto& o : all)
    for (const auto& x : inputs()) {
      CodecContext context{5, 1, 1};
      auto cpu = makeCodec(o, context), host = makeCodec(o, context), kept = makeCodec(o, context);
      kept->setResidence(Codec::Residence::Device);
      SCOPED_TRACE(kept->describe() + " on " + c10::str(x.sizes()));
      const auto onGpu = x.to(torch::kCUDA);
      const Payload a = host->encode(onGpu);
      Payload b = kept->encode(onGpu);
      ASSERT_TRUE(b.tail.defined());
      EXPECT_TRUE(b.tail.is_cuda());
      EXPECT_EQ(b.size(), a.size());
      const auto expected = cpu->decode(a, torch::kCPU), there = makeCodec(o, context)->decode(b, receiver);
      EXPECT_EQ(there.device(), receiver);
      EXPECT_TRUE(torch::equal(there.cpu(), expected));
      EXPECT_TRUE(torch::equal(makeCodec(o, context)->decode(b, torch::kCPU), expected)) << "a CPU receiver";
      b.gather();
      EXPECT_EQ(b.bytes, a.bytes);
      if (o.method != "gaussiank") EXPECT_EQ(b.bytes, cpu->encode(x).bytes);
    }
}

TEST_F(DeviceCodecs, ErrorCompensationStateStaysOnTheDeviceAndMatchesTheCpu) {
  for (const char* feedback : {"ef", "ef21", "diana"}) {
    const auto o = opts("topk", [&](auto& o) { o.k = 0.05, o.feedback = feedback; });
    CodecContext context{3, 0, 0};
    Compensator cpuSend(o, context, {}), gpuSend(o, context, {}), cpuReceive(o, context, {}),
        gpuReceive(o, context, {});
    torch::manual_seed(5);
    for (int step = 0; step < 4; ++step) {
      const auto x = torch::randn({64, 256});
      SendReport r1, r2;
      MessageMeta meta;
      const Payload a = cpuSend.send(x, meta, r1), b = gpuSend.send(x.to(torch::kCUDA), meta, r2);
      ASSERT_EQ(a.bytes, b.bytes) << feedback << " step " << step;
      const auto usedCpu = cpuReceive.receive(a, torch::kCPU, meta),
                 usedGpu = gpuReceive.receive(b, torch::kCUDA, meta);
      ASSERT_TRUE(usedGpu.is_cuda());
      EXPECT_TRUE(torch::allclose(usedGpu.cpu(), usedCpu, 1e-6, 1e-6)) << feedback << " step " << step;
    }
  }
}

TEST_F(DeviceCodecs, AqsgdBuffersLiveOnTheDevice) {
  auto o = opts("quantize", [](auto& o) { o.bits = 4, o.feedback = "aqsgd"; });
  AqsgdOptions aq;
  aq.warmup_epochs = 0;
  aq.samples = 16;
  Compensator sender(o, {}, aq), receiver(o, {}, aq);
  const std::vector<int64_t> samples{1, 3, 5, 7};
  MessageMeta meta;
  meta.samples = &samples;
  meta.epoch = 1;
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto x = torch::randn({4, 32}, torch::kCUDA);
    SendReport report;
    const auto used = receiver.receive(sender.send(x, meta, report), torch::kCUDA, meta);
    EXPECT_TRUE(used.is_cuda());
    EXPECT_LT((used - x).norm().item<double>(), 0.5 * x.norm().item<double>());
  }
}

}  // namespace
}  // namespace ps
