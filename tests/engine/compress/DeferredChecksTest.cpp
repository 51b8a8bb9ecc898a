// Checks on device values read together (engine/tensors/DeviceChecks.h), and the codecs' finiteness checks that go
// through them. A codec's tail paths are the ones a GPU takes; Residence::Always runs them here on the CPU.
#include "engine/compress/Codec.h"
#include "engine/compress/TensorKernels.h"
#include "engine/errors/DivergedError.h"
#include "engine/tensors/DeviceChecks.h"

#include "tests/engine/compress/CodecOptions.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ps {
namespace {

using test::opts;

torch::Tensor yes() {
  return torch::tensor(true);
}
torch::Tensor no() {
  return torch::tensor(false);
}

TEST(DeferredChecks, WithoutAnOpenScopeAFailedCheckThrowsAtOnce) {
  const auto before = deviceCheckTally();
  EXPECT_FALSE(checksDeferred());
  EXPECT_NO_THROW(requireOnDevice(yes(), [] { throw std::runtime_error("never"); }));
  EXPECT_THROW(requireOnDevice(no(), [] { throw std::runtime_error("failed"); }), std::runtime_error);
  EXPECT_EQ(deviceCheckTally().readAtOnce, before.readAtOnce + 2);
  EXPECT_EQ(deviceCheckTally().deferred, before.deferred);
  EXPECT_THROW(requireOnDevice(torch::ones({2}, torch::kBool), [] {}), std::logic_error);
  EXPECT_THROW(requireOnDevice(torch::ones({1}), [] {}), std::logic_error);
}

TEST(DeferredChecks, AnOpenScopeHoldsTheAnswersAndSettleThrowsTheFirstFailure) {
  const auto before = deviceCheckTally();
  std::string ran;
  {
    DeferredChecks checks;
    EXPECT_TRUE(checksDeferred());
    requireOnDevice(yes(), [&] { ran += "a"; });
    requireOnDevice(no(), [&] {
      ran += "b";
      throw std::runtime_error("second");
    });
    requireOnDevice(no(), [&] {
      ran += "c";
      throw std::runtime_error("third");
    });
    EXPECT_EQ(ran, "");  // nothing read yet
    EXPECT_EQ(checks.pending(), 3u);
    try {
      checks.settle();
      ADD_FAILURE() << "settle did not throw";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "second");
    }
    EXPECT_EQ(ran, "b");
    EXPECT_EQ(checks.pending(), 0u);  // cleared even though one failed
    EXPECT_NO_THROW(checks.settle());
  }
  EXPECT_FALSE(checksDeferred());
  EXPECT_EQ(deviceCheckTally().deferred, before.deferred + 3);
  EXPECT_EQ(deviceCheckTally().readAtOnce, before.readAtOnce);
}

TEST(DeferredChecks, AnswersReadWithOtherFiguresSettleTheSame) {
  DeferredChecks checks;
  requireOnDevice(yes(), [] { throw std::runtime_error("a"); });
  requireOnDevice(no(), [] { throw std::runtime_error("b"); });
  const auto answers = checks.answers(torch::kCPU);
  ASSERT_TRUE(answers.defined());
  EXPECT_EQ(answers.scalar_type(), torch::kDouble);
  // What a stage does: its loss and hits, then the answers, in one transfer.
  const auto host = torch::cat({torch::tensor({2.5, 7.0}, torch::kDouble), answers});
  EXPECT_THROW(checks.settle(host.narrow(0, 2, 2)), std::runtime_error);
  EXPECT_EQ(host[0].item<double>(), 2.5);

  requireOnDevice(no(), [] {});
  EXPECT_THROW(checks.settle(torch::ones({2}, torch::kDouble)), std::logic_error);  // the wrong number of answers
}

TEST(DeferredChecks, ClosingDropsWhatWasNotSettledAndOneScopeAtATime) {
  {
    DeferredChecks checks;
    requireOnDevice(no(), [] { throw std::runtime_error("dropped"); });
    EXPECT_THROW(DeferredChecks(), std::logic_error);
    EXPECT_TRUE(checksDeferred());  // the refused second scope did not close the first
  }
  EXPECT_FALSE(checksDeferred());
  EXPECT_NO_THROW(requireOnDevice(yes(), [] {}));
}

// On the host the kernel answers at once (no device to wait for); a failure still waits for an open scope to settle.
TEST(DeferredChecks, HostChecksAreAnsweredAtOnceAndTheirFailuresWaitForTheScope) {
  const auto bad = torch::tensor({1.f, NAN, 3.f});
  auto refuse = [] { throw std::runtime_error("not finite"); };
  const auto before = deviceCheckTally();
  EXPECT_THROW(requireAllFinite(bad, refuse), std::runtime_error);
  EXPECT_THROW(requireAllFinite(torch::tensor({-INFINITY}), refuse), std::runtime_error);
  EXPECT_NO_THROW(requireAllFinite(torch::empty({0}), refuse));
  EXPECT_NO_THROW(requireAllFinite(torch::tensor({3e38f, -1e-45f}), refuse));
  std::string order;
  {
    DeferredChecks checks;
    EXPECT_NO_THROW(requireAllFinite(bad.narrow(0, 0, 1), refuse));
    EXPECT_EQ(checks.pending(), 0u) << "a check that holds leaves nothing to read";
    EXPECT_NO_THROW(requireAllFinite(bad, [&] { order += "host "; }));
    requireOnDevice(no(), [&] { order += "device "; });
    EXPECT_NO_THROW(requireAllFinite(bad, refuse));
    EXPECT_EQ(checks.pending(), 3u);
    EXPECT_THROW(checks.settle(), std::runtime_error);
  }
  EXPECT_EQ(order, "host device ") << "failures are reported in the order they were found";
  const auto after = deviceCheckTally();
  EXPECT_EQ(after.readAtOnce, before.readAtOnce);  // the host kernel: no device read
  EXPECT_EQ(after.deferred, before.deferred + 1);  // the one answer left on a "device"
}

// The decoders' finiteness checks on a tail (a GPU's payload) wait for the scope, and then refuse the payload as
// they would have at once.
TEST(DeferredChecks, TailDecodersDeferTheirFinitenessChecks) {
  const auto x = torch::arange(21, torch::kFloat32).view({3, 7});
  auto nan = [](torch::Tensor& t, int64_t at) { t.narrow(0, at, 4).fill_(0xff); };
  struct Case {
    CompressionOptions o;
    std::function<void(torch::Tensor&)> spoil;
  };
  const Case cases[] = {
      {opts("none"), [&](auto& t) { nan(t, 8); }},
      {opts("fp16"), [](auto& t) { t[4] = 0x00, t[5] = 0x7c; }},  // +inf
      {opts("bf16"), [](auto& t) { t[4] = 0xc0, t[5] = 0x7f; }},  // NaN
      {opts("topk", [](auto& o) { o.k = 1.0; }), [&](auto& t) { nan(t, t.numel() - 4); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.o.method);
    auto codec = makeCodec(c.o);
    codec->setResidence(Codec::Residence::Always);
    Payload p = codec->encode(x);
    ASSERT_TRUE(p.tail.defined());
    p.tail = p.tail.clone();
    c.spoil(p.tail);
    DeferredChecks checks;
    torch::Tensor decoded;
    ASSERT_NO_THROW(decoded = codec->decode(p, torch::kCPU));
    EXPECT_EQ(decoded.sizes(), x.sizes());
    EXPECT_GE(checks.pending(), 1u);
    EXPECT_THROW(checks.settle(), PayloadError);
  }
}

// A sender's refusal of non-finite values, on the device's path (TopK's selection) and on every codec's own check;
// TopK on the host too, whose refusal comes from its own selection.
TEST(DeferredChecks, SendersDeferTheirRefusalOfNonFiniteValues) {
  auto x = torch::randn({6, 5});
  x[2][3] = NAN;
  for (const auto& [o, residence] : std::vector<std::pair<CompressionOptions, Codec::Residence>>{
           {opts("none"), Codec::Residence::Always},
           {opts("fp16"), Codec::Residence::Always},
           {opts("quantize", [](auto& q) { q.bits = 4; }), Codec::Residence::Always},
           {opts("topk", [](auto& q) { q.k = 0.2; }), Codec::Residence::Always},
           {opts("topk", [](auto& q) { q.k = 0.2; }), Codec::Residence::Host}}) {
    SCOPED_TRACE(o.method + (residence == Codec::Residence::Host ? " on the host" : ""));
    auto codec = makeCodec(o);
    codec->setResidence(residence);
    EXPECT_THROW(codec->encode(x), DivergedError);  // at once without a scope
    DeferredChecks checks;
    ASSERT_NO_THROW(codec->encode(x));
    EXPECT_GE(checks.pending(), 1u);
    try {
      checks.settle();
      ADD_FAILURE() << "settle did not throw";
    } catch (const DivergedError& e) {  // naming the tensor, which may be gone by then
      EXPECT_NE(std::string(e.what()).find("shape [6, 5]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ps
