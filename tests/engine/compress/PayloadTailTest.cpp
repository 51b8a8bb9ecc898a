// Payloads whose bulk stays where it was encoded (Payload::tail, Codec::Residence). Between GPUs of one process the
// tail moves device to device; here the same code runs on the CPU (Residence::Always), so what it must guarantee is
// checked on every machine: the bytes are the host path's bytes, decoding from the tail gives the host path's tensor,
// codecs that cannot keep a tail write everything as before, a payload leaving the process carries only host bytes,
// and a tail of the wrong size is a malformed payload, not a crash. tests/engine/compress/DeviceCodecTest.cpp checks
// the same on a GPU and between two GPUs.
#include "engine/compress/Codec.h"
#include "engine/compress/Compensation.h"
#include "engine/pipeline/Channel.h"

#include "tests/engine/compress/CodecOptions.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace ps {
namespace {

using test::opts;

// Activations, a gradient, and values at the edges of fp16 and bf16: subnormals, the largest finite values, the
// rounding boundaries beyond them (which saturate), ties between neighbours, and magnitudes only float32 holds.
std::vector<torch::Tensor> inputs() {
  torch::manual_seed(5);
  const float big = std::numeric_limits<float>::max();
  auto edges = torch::tensor({0.f,           -0.f,       1e-8f,    -3e-7f,  6.0e-8f, 6.1e-5f,  1.f + 0x1p-11f,
                              1.f + 0x1p-8f, 65504.f,    -65504.f, 65519.f, 65520.f, -70000.f, 1e6f,
                              -1e30f,        3.3895e38f, big,      -big,    2.5f,    -0.75f});
  return {torch::randn({4, 8, 6, 6}), torch::randn({50, 33}) * 100.f, edges};
}

// The options whose codecs keep a tail, and some that do not.
std::vector<CompressionOptions> withTails() {
  std::vector<CompressionOptions> all = {opts("none"), opts("fp16"), opts("bf16")};
  for (int bits = 1; bits <= 8; ++bits)
    for (const char* scale : {"tensor", "bucket", "channel"})
      all.push_back(opts("quantize", [&](auto& o) { o.bits = bits, o.scale = scale, o.bucket = 64; }));
  // Sparse payloads: every index format (K from a few indices to all of them), every value width kept on a device.
  for (double K : {0.002, 0.05, 0.3, 1.0})
    for (int bits : {32, 16, 8, 3, 1}) {
      all.push_back(opts("topk", [&](auto& o) { o.k = K, o.value_bits = bits, o.bucket = 16; }));
      all.push_back(opts("gaussiank", [&](auto& o) { o.k = K, o.value_bits = bits; }));
      all.push_back(opts("gaussiank", [&](auto& o) { o.k = K, o.value_bits = bits, o.trim = true; }));
      all.push_back(opts("sampledk", [&](auto& o) { o.k = K, o.value_bits = bits; }));
    }
  return all;
}

std::vector<CompressionOptions> withoutTails() {
  return {opts("quantize", [](auto& o) { o.bits = 4, o.range = "minmax"; }),
          opts("quantize", [](auto& o) { o.bits = 2, o.rounding = "stochastic"; }),
          opts("topk", [](auto& o) { o.k = 0.1, o.value_bits = 4, o.rounding = "stochastic"; }),
          opts("randk", [](auto& o) { o.k = 0.2, o.value_bits = 8; }),
          opts("qsgd"),
          opts("sign")};
}

std::string nameOf(const CompressionOptions& o) {
  return o.method + " bits=" + std::to_string(o.bits) + " scale=" + o.scale + " K=" + std::to_string(o.k) +
         " value_bits=" + std::to_string(o.value_bits) + (o.trim ? " trim" : "");
}

TEST(PayloadTails, GatheredTailsAreTheHostPathsBytesAndDecodeToTheSameTensor) {
  for (const auto& o : withTails())
    for (const auto& x : inputs()) {
      SCOPED_TRACE(nameOf(o) + " on " + c10::str(x.sizes()));
      CodecContext context{3, 1, 0};
      auto host = makeCodec(o, context), kept = makeCodec(o, context);
      kept->setResidence(Codec::Residence::Always);
      for (int message = 0; message < 2; ++message) {
        const Payload a = host->encode(x), b = kept->encode(x);
        ASSERT_FALSE(a.tail.defined());
        ASSERT_TRUE(b.tail.defined()) << "this codec can leave its bulk where the input is";
        EXPECT_EQ(b.tail.scalar_type(), torch::kUInt8);
        EXPECT_LT(b.bytes.size(), a.bytes.size());
        EXPECT_EQ(b.size(), a.size()) << "links count the same bytes either way";
        EXPECT_EQ(b.values, a.values);
        // Decoding from the tail, by the sending codec (error feedback measures there) or a fresh one.
        const auto fromBytes = host->decode(a, torch::kCPU), fromTail = kept->decode(b, torch::kCPU);
        EXPECT_TRUE(torch::equal(fromBytes, fromTail));
        const auto shape = x.sizes().vec();
        EXPECT_TRUE(torch::equal(makeCodec(o, context)->decode(b, torch::kCPU, &shape), fromBytes));
        Payload gathered = b;
        gathered.gather();
        EXPECT_FALSE(gathered.tail.defined());
        ASSERT_EQ(gathered.bytes, a.bytes);
        gathered.gather();  // nothing left to gather
        EXPECT_EQ(gathered.bytes, a.bytes);
      }
    }
}

TEST(PayloadTails, TheDecodedTensorIsTheReceiversOwn) {
  // The identity's tail is a copy of the input and its decode a copy of the tail: the sender may reuse its tensor,
  // and the receiver may change what it got, without either seeing the other's writes.
  auto codec = makeCodec(opts("none"));
  codec->setResidence(Codec::Residence::Always);
  auto x = torch::randn({3, 4});
  const auto expected = x.clone();
  const Payload p = codec->encode(x);
  x.fill_(7.f);
  auto y = codec->decode(p, torch::kCPU);
  EXPECT_TRUE(torch::equal(y, expected));
  y.fill_(-1.f);
  EXPECT_TRUE(torch::equal(codec->decode(p, torch::kCPU), expected));
  EXPECT_TRUE(y.requires_grad_(true).requires_grad());  // a stage's input: a plain float leaf
}

TEST(PayloadTails, CodecsThatCannotKeepATailWriteEverythingToBytes) {
  for (const auto& o : withoutTails()) {
    SCOPED_TRACE(nameOf(o));
    CodecContext context{3, 2, 1};
    auto host = makeCodec(o, context), kept = makeCodec(o, context);
    kept->setResidence(Codec::Residence::Always);
    const auto x = torch::randn({40, 25});
    const Payload a = host->encode(x), b = kept->encode(x);
    EXPECT_FALSE(b.tail.defined());
    EXPECT_EQ(a.bytes, b.bytes);
  }
}

TEST(PayloadTails, DeviceResidenceKeepsNoTailForAHostInput) {
  // Residence::Device leaves tails only for CUDA inputs: on the CPU there is nothing to save.
  auto codec = makeCodec(opts("quantize", [](auto& o) { o.bits = 4; }));
  codec->setResidence(Codec::Residence::Device);
  EXPECT_FALSE(codec->encode(torch::randn({64})).tail.defined());
}

TEST(PayloadTails, ACodecThatReadsNoTailsDecodesTheGatheredPayload) {
  // Same codec id, a setting that never keeps tails (min-max): the payload is gathered and read from its bytes.
  auto sender = makeCodec(opts("quantize", [](auto& o) { o.bits = 3; }));
  auto receiver = makeCodec(opts("quantize", [](auto& o) { o.bits = 3, o.range = "minmax"; }));
  sender->setResidence(Codec::Residence::Always);
  const auto x = torch::randn({16, 9});
  const Payload p = sender->encode(x);
  ASSERT_TRUE(p.tail.defined());
  EXPECT_TRUE(torch::equal(receiver->decode(p, torch::kCPU), sender->decode(p, torch::kCPU)));
}

TEST(PayloadTails, ATailOfTheWrongSizeIsAMalformedPayload) {
  for (const auto& o : {opts("none"), opts("fp16"), opts("quantize", [](auto& q) { q.bits = 5; })}) {
    SCOPED_TRACE(nameOf(o));
    auto codec = makeCodec(o);
    codec->setResidence(Codec::Residence::Always);
    Payload p = codec->encode(torch::randn({10, 10}));
    ASSERT_TRUE(p.tail.defined());
    for (int64_t cut : {int64_t(1), p.tail.numel()}) {
      Payload short_ = p;
      short_.tail = p.tail.slice(0, 0, p.tail.numel() - cut);
      EXPECT_THROW(codec->decode(short_, torch::kCPU), PayloadError);
    }
    Payload longer = p;
    longer.tail = torch::cat({p.tail, torch::zeros({3}, torch::kUInt8)});
    EXPECT_THROW(codec->decode(longer, torch::kCPU), PayloadError);
  }
}

TEST(PayloadTails, HostileTailsAreMalformedPayloads) {
  // A tail may come from another process: non-finite values, codes with stray bits and bad indices are refused as
  // in bytes. The input is 0..20, so TopK's selection is known: 10% keeps positions 19 and 20, whose gaps 20 and 1
  // are the cheapest block (two varint bytes, first in the tail).
  const auto x = torch::arange(21, torch::kFloat32).view({3, 7});
  auto refused = [&](const CompressionOptions& o, const std::function<void(torch::Tensor&)>& spoil) {
    auto codec = makeCodec(o);
    codec->setResidence(Codec::Residence::Always);
    Payload p = codec->encode(x);
    p.tail = p.tail.clone();
    spoil(p.tail);
    EXPECT_THROW(codec->decode(p, torch::kCPU), PayloadError) << o.method;
  };
  auto nan = [](torch::Tensor& t, int64_t at) { t.narrow(0, at, 4).fill_(0xff); };
  refused(opts("none"), [&](auto& t) { nan(t, 8); });
  refused(opts("fp16"), [](auto& t) { t[4] = 0x00, t[5] = 0x7c; });                                  // +inf
  refused(opts("bf16"), [](auto& t) { t[4] = 0xc0, t[5] = 0x7f; });                                  // NaN
  refused(opts("quantize", [](auto& o) { o.bits = 3; }), [](auto& t) { t[t.numel() - 1] = 0xff; });  // 63 of 64 bits
  refused(opts("topk", [](auto& o) { o.k = 1.0; }), [&](auto& t) { nan(t, t.numel() - 4); });
  refused(opts("topk", [](auto& o) { o.k = 0.1; }), [](auto& t) { t[1] = 0x00; });  // a gap of 0
  refused(opts("topk", [](auto& o) { o.k = 0.1; }), [](auto& t) { t[0] = 0x15; });  // position 21 of 21

  // A tail beside a block whose values are all in the bytes (float32 here) is not silently ignored.
  Payload p = makeCodec(opts("quantize", [](auto& o) { o.bits = 32; }))->encode(x);
  p.tail = torch::zeros({8}, torch::kUInt8);
  auto reader = makeCodec(opts("quantize", [](auto& o) { o.bits = 4; }));
  EXPECT_THROW(reader->decode(p, torch::kCPU), PayloadError);
}

TEST(PayloadTails, AMessageToAnotherProcessCarriesOnlyHostBytes) {
  struct Captured : RemoteEnd {
    std::vector<Message> sent;
    void push(Message m) override { sent.push_back(std::move(m)); }
    Message pop(uint64_t) override { throw std::logic_error("not used"); }
  };
  auto end = std::make_shared<Captured>();
  Channel channel;
  channel.setRemote(end);
  auto host = makeCodec(opts("fp16")), kept = makeCodec(opts("fp16"));
  kept->setResidence(Codec::Residence::Always);
  const auto x = torch::randn({5, 7});
  Message m;
  m.payload = kept->encode(x);
  ASSERT_TRUE(m.payload.tail.defined());
  channel.push(std::move(m));
  ASSERT_EQ(end->sent.size(), 1u);
  EXPECT_FALSE(end->sent[0].payload.tail.defined());
  EXPECT_EQ(end->sent[0].payload.bytes, host->encode(x).bytes);

  // An end that carries device memory (NCCL between GPU stages) gets the tail as it is.
  struct Carrying : Captured {
    bool takesTails() const override { return true; }
  };
  auto carrying = std::make_shared<Carrying>();
  Channel toGpu;
  toGpu.setRemote(carrying);
  Message c;
  c.payload = kept->encode(x);
  toGpu.push(std::move(c));
  ASSERT_EQ(carrying->sent.size(), 1u);
  EXPECT_TRUE(carrying->sent[0].payload.tail.defined());

  // Within the process the message keeps its tail.
  Channel local;
  Message n;
  n.payload = kept->encode(x);
  local.push(std::move(n));
  EXPECT_TRUE(local.pop().payload.tail.defined());
}

TEST(PayloadTails, ErrorCompensationGivesTheSameBytesAndStateWithTails) {
  for (const char* feedback : {"ef", "ef21", "diana"}) {
    SCOPED_TRACE(feedback);
    const auto o = opts("quantize", [&](auto& q) { q.bits = 2, q.feedback = feedback; });
    CodecContext context{9, 0, 0};
    Compensator host(o, context, {}), kept(o, context, {});
    Compensator hostReceiver(o, context, {}), keptReceiver(o, context, {});
    kept.setResidence(Codec::Residence::Always);
    torch::manual_seed(2);
    for (int step = 0; step < 3; ++step) {
      const auto x = torch::randn({6, 20});
      SendReport r1, r2;
      const Payload a = host.send(x, {}, r1);
      Payload b = kept.send(x, {}, r2);
      EXPECT_TRUE(b.tail.defined());
      EXPECT_EQ(r1.err_num, r2.err_num);
      EXPECT_TRUE(torch::equal(hostReceiver.receive(a, torch::kCPU, {}), keptReceiver.receive(b, torch::kCPU, {})));
      b.gather();
      EXPECT_EQ(a.bytes, b.bytes) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace ps
