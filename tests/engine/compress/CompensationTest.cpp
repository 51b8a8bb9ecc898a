#include "engine/compress/Compensation.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ps {
namespace {

CompressionOptions opts(const std::string& method, const std::string& feedback) {
  CompressionOptions o;
  o.method = method;
  o.feedback = feedback;
  o.k = 0.05;
  o.bits = 4;
  o.levels = 4;
  o.p = 0.2;
  return o;
}

// A slowly drifting "gradient" so shifts have something to learn.
torch::Tensor signal(int step) {
  torch::manual_seed(100 + step);
  return torch::sin(torch::arange(600, torch::kFloat32) * 0.01 + 0.05 * step) + 0.1 * torch::randn({600});
}

// A message's figures come from one read of their sums, and each is what reading it alone gives (float32 sums on
// the tensors' device); without the codec (a tensor sent whole) its own figures are left alone.
TEST(Compensation, OneReadOfTheSumsGivesEachFigureAsReadAlone) {
  torch::manual_seed(5);
  const auto x = torch::randn({777}), used = x + 0.1 * torch::randn({777});
  const auto in = x + torch::randn({777}), out = in + 0.2 * torch::randn({777});
  auto alone = [](const torch::Tensor& t) { return t.pow(2).sum().item<double>(); };
  SendReport r;
  measureSent(x, {used, in, out}, true, r);
  EXPECT_DOUBLE_EQ(r.err_num, alone(used - x));
  EXPECT_DOUBLE_EQ(r.err_den, alone(x));
  EXPECT_DOUBLE_EQ(r.comp_num, alone(out - in));
  EXPECT_DOUBLE_EQ(r.comp_den, alone(in));
  EXPECT_DOUBLE_EQ(r.out_norm, std::sqrt(alone(used)));
  SendReport whole;
  measureSent(x, {x, {}, {}}, false, whole);
  EXPECT_EQ(whole.err_num, 0.0);
  EXPECT_DOUBLE_EQ(whole.err_den, alone(x));
  EXPECT_EQ(whole.comp_num, 0.0);
  EXPECT_EQ(whole.comp_den, 0.0);
  EXPECT_EQ(whole.out_norm, 0.0);
}

// A deferred report reads nothing while messages are sent: their sums wait on the device until settle(), which then
// gives every figure bit for bit as reading each message's at once did, with and without the codec and the output.
TEST(Compensation, DeferredFiguresWaitForSettleAndThenMatchEveryBit) {
  torch::manual_seed(6);
  SendReport now, later;
  later.deferred = true;
  for (int m = 0; m < 4; ++m) {
    const auto x = torch::randn({513}), used = x + 0.1 * torch::randn({513});
    const auto in = x + torch::randn({513}), out = in + 0.2 * torch::randn({513});
    const bool codec = m != 1, output = m != 2;
    const SentTensors sent = codec ? SentTensors{used, in, out} : SentTensors{x, {}, {}};
    measureSent(x, sent, output, now);
    measureSent(x, sent, output, later);
  }
  EXPECT_EQ(later.err_num, 0.0);
  EXPECT_EQ(later.err_den, 0.0);
  EXPECT_EQ(later.out_norm, 0.0);
  ASSERT_TRUE(later.pending.defined());
  EXPECT_EQ(later.pending.numel(), 5);
  settle(later);
  EXPECT_FALSE(later.pending.defined());
  EXPECT_GT(now.comp_num, 0.0);
  EXPECT_EQ(later.err_num, now.err_num);
  EXPECT_EQ(later.err_den, now.err_den);
  EXPECT_EQ(later.comp_num, now.comp_num);
  EXPECT_EQ(later.comp_den, now.comp_den);
  EXPECT_EQ(later.out_norm, now.out_norm);
  settle(later);  // nothing pending: nothing added
  EXPECT_EQ(later.err_num, now.err_num);
}

// With nothing to compensate and a lossless codec the compensator is the codec: x arrives exactly, the shape the
// receiver expects is checked, and no error pass is spent on it.
TEST(Compensation, ALosslessCodecWithoutCompensationSendsXAsItIs) {
  Compensator sender(opts("none", "none"), {}, {});
  Compensator receiver(opts("none", "none"), {}, {});
  ASSERT_TRUE(sender.lossless());
  const auto x = signal(0).reshape({20, 30});
  SendReport r;
  const Payload p = sender.send(x, {}, r);
  EXPECT_EQ(r.values, uint64_t(x.numel()));
  EXPECT_EQ(r.err_den, 0.0);  // not measured
  EXPECT_TRUE(torch::equal(receiver.receive(p, torch::kCPU, {}), x));
  const std::vector<int64_t> other = {30, 20};
  MessageMeta meta;
  meta.shape = &other;
  EXPECT_THROW(receiver.receive(p, torch::kCPU, meta), PayloadError);
  EXPECT_FALSE(Compensator(opts("none", "ef"), {}, {}).lossless());
  EXPECT_FALSE(Compensator(opts("fp16", "none"), {}, {}).lossless());
}

TEST(Compensation, ErrorFeedbackKeepsInputPlusOldErrorEqualToSentPlusNewError) {
  Compensator sender(opts("topk", "ef"), {}, {});
  Compensator receiver(opts("topk", "ef"), {}, {});
  torch::Tensor e = torch::zeros({600});
  for (int step = 0; step < 50; ++step) {
    auto x = signal(step);
    SendReport r;
    auto p = sender.send(x, {}, r);
    auto sent = receiver.receive(p, torch::kCPU, {});
    // x + e_old = x_hat + e_new, with e_new what the sender keeps: check through the next step's input.
    auto eNew = x + e - sent;
    EXPECT_TRUE(torch::allclose(x + e, sent + eNew));
    e = eNew;
    EXPECT_NEAR(r.comp_num, (eNew.pow(2).sum()).item<double>(), 1e-3 * (1 + r.comp_num));
  }
  // Over many steps error feedback delivers what plain TopK drops: the sum of what arrived tracks the sum of
  // the inputs (the gap is the bounded residual), while without feedback most of the mass never arrives.
  auto drift = [&](const std::string& feedback) {
    torch::Tensor sumX = torch::zeros({600}), sumSent = torch::zeros({600});
    Compensator s2(opts("topk", feedback), {}, {}), r2(opts("topk", feedback), {}, {});
    for (int step = 0; step < 200; ++step) {
      auto x = signal(step);
      SendReport r;
      sumX += x;
      sumSent += r2.receive(s2.send(x, {}, r), torch::kCPU, {});
    }
    return ((sumX - sumSent).norm() / sumX.norm()).item<double>();
  };
  const double withEf = drift("ef"), without = drift("none");
  EXPECT_GT(without, 0.5);
  EXPECT_LT(withEf, without / 3) << "EF " << withEf << " vs none " << without;
}

// Sender and receiver keep their own copies of the state; they must stay bit-identical.
void expectMirrored(const std::string& method, const std::string& feedback) {
  CodecContext c;
  c.seed = 9;
  Compensator sender(opts(method, feedback), c, {}), receiver(opts(method, feedback), c, {});
  double firstErr = -1, lastErr = 0;
  for (int step = 0; step < 120; ++step) {
    auto x = signal(step);
    SendReport r;
    auto p = sender.send(x, {}, r);
    auto used = receiver.receive(p, torch::kCPU, {});
    // The sender's view of what the receiver uses (measured in r.err_num) equals the receiver's exactly.
    EXPECT_DOUBLE_EQ(r.err_num, (used - x).pow(2).sum().item<double>()) << feedback << " step " << step;
    const double err = std::sqrt(r.err_num / r.err_den);
    if (firstErr < 0) firstErr = err;
    lastErr = err;
  }
  if (feedback != "randdiana") EXPECT_LT(lastErr, firstErr) << feedback << ": the shift should learn the signal";
}

TEST(Compensation, Ef21StateIsIdenticalAtBothEnds) { expectMirrored("topk", "ef21"); }
TEST(Compensation, DianaStateIsIdenticalAtBothEnds) { expectMirrored("qsgd", "diana"); }
TEST(Compensation, RandDianaStateIsIdenticalAtBothEnds) { expectMirrored("randk", "randdiana"); }

// Rand-DIANA's shift moves only when the coin sends x whole: between those resets it stays where it is (DIANA's
// moves by alpha d every message). With a coin that never comes up the shift stays zero, so a zero input arrives as
// exactly zero; a shift that had moved would send the quantized difference to it instead.
TEST(Compensation, RandDianaKeepsItsShiftFixedBetweenResets) {
  for (const std::string feedback : {"randdiana", "diana"}) {
    auto o = opts("quantize", feedback);
    o.rounding = "stochastic";
    o.p = 1e-12;
    Compensator sender(o, {}, {}), receiver(o, {}, {});
    torch::Tensor used;
    for (int step = 0; step < 3; ++step) {
      SendReport r;
      used = receiver.receive(sender.send(step < 2 ? signal(step) : torch::zeros({600}), {}, r), torch::kCPU, {});
    }
    if (feedback == "randdiana")
      EXPECT_EQ(used.abs().max().item<float>(), 0.f) << "the shift moved without a reset";
    else
      EXPECT_GT(used.abs().max().item<float>(), 0.f) << "DIANA's shift moves by alpha d";
  }
}

TEST(Compensation, AqsgdSendsWholeDuringWarmupThenDeltasWithMirroredBuffers) {
  AqsgdOptions aq{1, 10};
  CompressionOptions o = opts("quantize", "aqsgd");
  Compensator sender(o, {}, aq), receiver(o, {}, aq);
  std::vector<int64_t> ids{3, 7};
  for (int epoch = 0; epoch < 6; ++epoch) {
    torch::manual_seed(epoch);
    auto x = torch::randn({2, 4, 5}) * 0.05 + torch::ones({2, 4, 5}) * (1 + 0.01 * epoch);
    MessageMeta meta{0, &ids, epoch};
    SendReport r;
    auto p = sender.send(x, meta, r);
    auto used = receiver.receive(p, torch::kCPU, meta);
    if (epoch == 0) {
      EXPECT_TRUE(torch::equal(used, x));  // warm-up: uncompressed
      EXPECT_EQ(p.size(), 8 + 3 * 8 + 40u * 4);
    } else {
      EXPECT_LT(p.size(), 8 + 3 * 8 + 40u * 4);  // deltas are quantized
      // Quantizing the small change x - m keeps the error far below quantizing x itself.
      EXPECT_LT(std::sqrt(r.err_num / r.err_den), 0.01);
    }
    EXPECT_DOUBLE_EQ(r.err_num, (used - x).pow(2).sum().item<double>());
  }
  EXPECT_DOUBLE_EQ(Compensator::aqsgdBytes(60000, 16 * 28 * 28), 60000.0 * 16 * 28 * 28 * 2);
}

// A receiver may be told its device without an index ("cuda" where the buffers say "cuda:0"; here "cpu:0" against the
// buffers' "cpu"): its buffers still persist, so it rebuilds what the sender used rather than the bare delta.
TEST(Compensation, AqsgdReceiverKeepsItsBuffersWhateverTheDeviceIsCalled) {
  AqsgdOptions aq{0, 10};
  CompressionOptions o = opts("quantize", "aqsgd");
  Compensator sender(o, {}, aq), receiver(o, {}, aq);
  std::vector<int64_t> ids{3, 7};
  for (int epoch = 0; epoch < 4; ++epoch) {
    torch::manual_seed(epoch);
    const auto x = torch::randn({2, 4, 5});
    MessageMeta meta{0, &ids, epoch};
    SendReport r;
    const auto p = sender.send(x, meta, r);
    const auto used = receiver.receive(p, torch::Device(torch::kCPU, 0), meta);
    EXPECT_NEAR((used - x).pow(2).sum().item<double>(), r.err_num, 1e-9 + 1e-6 * r.err_num) << "epoch " << epoch;
    EXPECT_LT((used - x).norm().item<double>(), 0.5 * x.norm().item<double>()) << "epoch " << epoch;
  }
}

TEST(Compensation, ShapeChangesResetTheStateAndSayWhy) {
  Compensator sender(opts("topk", "ef"), {}, {});
  SendReport r;
  sender.send(torch::randn({4, 10}), {}, r);
  EXPECT_TRUE(r.reset.empty());
  sender.send(torch::randn({3, 10}), {}, r);  // the last, shorter micro-batch
  EXPECT_NE(r.reset.find("reset"), std::string::npos);
  EXPECT_NE(r.reset.find("[3, 10]"), std::string::npos);
}

TEST(Compensation, RetargetKeepsTheStateAndStartsANewRandomStream) {
  CompressionOptions o = opts("randk", "ef");
  o.k = 0.1;
  Compensator fresh(o, {}, {}), moved(o, {}, {});
  auto x = signal(0);
  SendReport r;
  moved.send(x, {}, r);  // leaves a residual behind
  moved.retarget(o);     // same K, new codec
  auto zero = torch::zeros({600});
  Compensator receiver(o, {}, {});
  const auto sent = receiver.receive(moved.send(zero, {}, r), torch::kCPU, {});
  EXPECT_GT(sent.abs().sum().item<double>(), 0.0) << "the residual survived the retarget";
  // A fresh codec at its first message draws these positions; the retargeted one must not replay them.
  const auto first = receiver.receive(fresh.send(x, {}, r), torch::kCPU, {});
  EXPECT_FALSE(torch::equal(sent.ne(0), first.ne(0)));
  EXPECT_THROW(moved.retarget(opts("randk", "ef21")), std::logic_error);
}

}  // namespace
}  // namespace ps
