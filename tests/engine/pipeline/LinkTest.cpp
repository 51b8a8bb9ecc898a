#include "engine/pipeline/Link.h"
#include "engine/pipeline/Pipeline.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace ps {
namespace {

Link makeLink(LinkModel model) { return Link(0, model, Link::Settings{}); }

TEST(Link, CountsRawAndWireBytesPerDirection) {
  Link link = makeLink({100, 0, false});
  auto a = torch::randn({4, 8});  // 32 floats: 128 raw bytes; header 8 + 2 dims * 8 = 24
  auto b = torch::randn({10});
  double clock = 0;
  link.send(Direction::Forward, a, 0);
  link.send(Direction::Forward, b, 0);
  link.send(Direction::Backward, a, 0);
  EXPECT_TRUE(torch::equal(link.receive(Direction::Forward, torch::kCPU, clock), a));
  EXPECT_TRUE(torch::equal(link.receive(Direction::Forward, torch::kCPU, clock), b));
  EXPECT_TRUE(torch::equal(link.receive(Direction::Backward, torch::kCPU, clock), a));

  auto fwd = link.takeTraffic(Direction::Forward);
  EXPECT_EQ(fwd.messages, 2u);
  EXPECT_EQ(fwd.raw_bytes, 4u * (32 + 10));
  EXPECT_EQ(fwd.wire_bytes, (24u + 128) + (16u + 40));
  EXPECT_EQ(fwd.elements, 42u);
  EXPECT_DOUBLE_EQ(fwd.rel_error, 0.0);
  EXPECT_EQ(fwd.method, "none");
  auto bwd = link.takeTraffic(Direction::Backward);
  EXPECT_EQ(bwd.messages, 1u);
  EXPECT_EQ(bwd.wire_bytes, 24u + 128);
  // Taking the traffic resets the counters for the next step.
  EXPECT_EQ(link.takeTraffic(Direction::Forward).messages, 0u);
}

TEST(Link, ModelsLatencyPlusTransferTime) {
  // 1 Mbit/s and 2 ms: a payload of B bytes takes 0.002 + 8B / 1e6 seconds.
  Link link = makeLink({1, 2, false});
  auto x = torch::randn({1000});  // 4016 bytes on the wire
  double recv = 0;
  const double sent = link.send(Direction::Forward, x, 0.5);
  EXPECT_GE(sent, 0.5);  // the sender's clock after encoding
  link.receive(Direction::Forward, torch::kCPU, recv);
  const double transfer = 8.0 * 4016 / 1e6;
  auto t = link.takeTraffic(Direction::Forward);
  // The receiver's clock is the arrival plus its own measured decode time, whatever the machine's load.
  EXPECT_NEAR(recv, sent + transfer + 0.002 + t.decode_s, 1e-9);
  EXPECT_NEAR(t.modelled_s, transfer + 0.002, 1e-12);
}

TEST(Link, SerialisesBackToBackMessages) {
  Link link = makeLink({1, 0, false});
  auto x = torch::randn({1000});
  const double transfer = 8.0 * 4016 / 1e6;
  // Both are ready (encoded) at about the same time, so the second waits for the first transfer to end. The
  // emulated clocks include the measured encode and decode times: the expectations are built from them, so a
  // busy machine cannot move the result.
  const double sent1 = link.send(Direction::Forward, x, 0);
  const double sent2 = link.send(Direction::Forward, x, 0);
  double clock = 0;
  link.receive(Direction::Forward, torch::kCPU, clock);
  const double first = clock;
  link.receive(Direction::Forward, torch::kCPU, clock);
  const double decode = link.takeTraffic(Direction::Forward).decode_s;
  EXPECT_GE(first, sent1 + transfer);
  EXPECT_LE(first, sent1 + transfer + decode + 1e-12);
  const double secondArrives = std::max(sent2, sent1 + transfer) + transfer;  // starts when the first ends
  EXPECT_GE(clock, secondArrives);
  EXPECT_GE(clock, 2 * transfer);  // never two transfers at once
  EXPECT_LE(clock, std::max(first, secondArrives) + decode + 1e-12);
}

// A middle stage sends on link 1 (forward) and back on link 0 (backward). With one interface per stage the second
// message waits for the first to leave; with a wire per direction it does not.
TEST(Link, AStagesTwoDirectionsShareItsInterfaceWhenTheModelSaysSo) {
  auto x = torch::randn({1000});
  const double transfer = 8.0 * 4016 / 1e6;  // at 1 Mbit/s
  for (bool shared : {false, true}) {
    LinkModel model{1, 0, false};
    model.shared_egress = shared;
    Link back = makeLink(model), on = makeLink(model);
    auto egress = std::make_shared<Link::Egress>();
    back.shareEgress(Direction::Backward, egress);
    on.shareEgress(Direction::Forward, egress);
    const double sent1 = back.send(Direction::Backward, x, 0);
    const double sent2 = on.send(Direction::Forward, x, sent1);
    double first = 0, second = 0;
    back.receive(Direction::Backward, torch::kCPU, first);
    on.receive(Direction::Forward, torch::kCPU, second);
    const double decode = on.takeTraffic(Direction::Forward).decode_s;
    back.takeTraffic(Direction::Backward);
    if (shared) {
      EXPECT_GE(second, sent1 + 2 * transfer) << "the forward message left after the backward one";
    } else {
      EXPECT_GE(second, sent2 + transfer);
      EXPECT_LE(second, sent2 + transfer + decode + 1e-12) << "a wire of its own: it left at once";
    }
    // A step's end frees the interface: the next step's first message leaves at once.
    on.send(Direction::Forward, x, 0);
    double next = 0;
    on.receive(Direction::Forward, torch::kCPU, next);
    EXPECT_LE(next, transfer + on.takeTraffic(Direction::Forward).decode_s + 0.01) << shared;
  }
}

// Sends one message over `link` and receives it: the wall seconds that took, and the receiver's emulated clock.
std::pair<double, double> timedTransfer(Link& link, const torch::Tensor& x) {
  const auto t0 = std::chrono::steady_clock::now();
  link.send(Direction::Forward, x, 0);
  double clock = 0;
  link.receive(Direction::Forward, torch::kCPU, clock);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), clock};
}

TEST(Link, AccountedModeDoesNotSleepButThrottledModeWaits) {
  auto x = torch::randn({1000});
  Link accounted = makeLink({0.01, 2000, false});  // 3.2 s transfer + 2 s latency, only accounted
  const auto [waited, clock] = timedTransfer(accounted, x);
  EXPECT_GE(clock, 5.2);
  EXPECT_LT(waited, 2.0);  // far below the 5.2 s it models, however busy the machine
  Link throttled = makeLink({1, 20, true});  // 32 ms transfer + 20 ms latency, slept for real
  EXPECT_GE(timedTransfer(throttled, x).first, 0.050);
}

TEST(Link, WireBytesAreThePayloadSizesAndErrorsAreMeasured) {
  Link::Settings settings;
  settings.forward.method = "topk";
  settings.forward.k = 0.25;
  settings.backward.method = "quantize";
  settings.backward.bits = 4;
  Link link(0, {}, settings);
  torch::manual_seed(0);
  auto x = torch::randn({16, 32});
  double clock = 0;
  link.send(Direction::Forward, x, 0);
  link.send(Direction::Backward, x, 0);
  auto sparse = link.receive(Direction::Forward, torch::kCPU, clock);
  auto quant = link.receive(Direction::Backward, torch::kCPU, clock);
  EXPECT_EQ(sparse.nonzero().size(0), 128);  // exactly k = 0.25 * 512
  auto fwd = link.takeTraffic(Direction::Forward), bwd = link.takeTraffic(Direction::Backward);
  // The reported wire bytes are what an encoder of the same settings produces for the same tensor.
  CompressionOptions o = settings.forward;
  CodecContext c;
  c.direction = 0;
  EXPECT_EQ(fwd.wire_bytes, makeCodec(o, c)->encode(x).size());
  EXPECT_EQ(fwd.nonzeros, 128u);
  EXPECT_DOUBLE_EQ(fwd.density(), 0.25);
  const double err = ((sparse - x).norm() / x.norm()).item<double>();
  EXPECT_NEAR(fwd.rel_error, err, 1e-6);
  EXPECT_NEAR(bwd.rel_error, ((quant - x).norm() / x.norm()).item<double>(), 1e-6);
  EXPECT_GT(bwd.ratio(), 7.0);  // 4 bits plus fp16 scales per 512 values
  EXPECT_EQ(fwd.method, "topk 25%");
}

TEST(Link, AbortWakesAWaitingReceiver) {
  Link link = makeLink({});
  std::thread waiter([&] {
    double clock = 0;
    EXPECT_THROW(link.receive(Direction::Backward, torch::kCPU, clock), PipelineAborted);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  link.abort();
  waiter.join();
  link.reset();
  link.send(Direction::Backward, torch::ones({2}), 0);
  double clock = 0;
  EXPECT_TRUE(torch::equal(link.receive(Direction::Backward, torch::kCPU, clock), torch::ones({2})));
}

TEST(Link, MergedMeasurementsAreSumsOverTheParts) {
  // What a controller reads of two replicas (or stages) is what one sender of all their messages would have measured:
  // sums, also after the figures travel between ranks. Accordion's norm of both is then sqrt(3^2 + 4^2).
  LinkTraffic a, b;
  a.measures = {{adapt_measure::kSquaredNorm, 9.0}};
  b.measures = {{adapt_measure::kSquaredNorm, 16.0}, {adapt_measure::kGravacRaw, 2.0}};
  const LinkTraffic merged = mergeTraffic({trafficThroughJson(a), trafficThroughJson(b)});
  EXPECT_DOUBLE_EQ(merged.measures.at(adapt_measure::kSquaredNorm), 25.0);
  EXPECT_DOUBLE_EQ(merged.measures.at(adapt_measure::kGravacRaw), 2.0);
  EXPECT_EQ(merged.measures.size(), 2u);
  EXPECT_TRUE(mergeTraffic({trafficThroughJson(LinkTraffic())}).measures.empty());  // nothing measured, nothing made up
}

TEST(Link, MergedRelativeErrorIsOverAllMessagesNotAWeightedGuess) {
  // Two replicas' copies of a link carry tensors of very different norms; the merged error must be
  // ||x_hat - x|| / ||x|| over both, as if one link had sent them, also after the figures travel between ranks.
  Link::Settings settings;
  settings.forward.method = "topk";
  settings.forward.k = 0.1;
  Link first(0, {100, 0, false}, settings), second(0, {100, 0, false}, settings);  // figures must be finite
  torch::manual_seed(3);
  // a: dense noise (TopK drops much of it); b: a few large values TopK keeps whole, then small noise.
  const auto a = 100 * torch::randn({1000}), b = torch::randn({10000});
  b.slice(0, 0, 500).mul_(100);
  double clock = 0;
  first.send(Direction::Forward, a, 0);
  second.send(Direction::Forward, b, 0);
  const auto ah = first.receive(Direction::Forward, torch::kCPU, clock);
  const auto bh = second.receive(Direction::Forward, torch::kCPU, clock);
  const double errSq = (ah - a).pow(2).sum().item<double>() + (bh - b).pow(2).sum().item<double>();
  const double refSq = a.pow(2).sum().item<double>() + b.pow(2).sum().item<double>();
  const double want = std::sqrt(errSq / refSq);
  const LinkTraffic ta = first.takeTraffic(Direction::Forward), tb = second.takeTraffic(Direction::Forward);
  const LinkTraffic merged = mergeTraffic({trafficThroughJson(ta), trafficThroughJson(tb)});
  EXPECT_NEAR(merged.rel_error, want, 1e-4 * want);
  EXPECT_EQ(merged.elements, 11000u);
  EXPECT_EQ(merged.wire_bytes, ta.wire_bytes + tb.wire_bytes);
  // Weighting the two errors by element counts, as before, would report something else entirely here.
  const double weighted =
      std::sqrt((ta.rel_error * ta.rel_error * 1000 + tb.rel_error * tb.rel_error * 10000) / 11000);
  EXPECT_GT(std::abs(weighted - want), 0.05 * want);
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

AdaptDecision select(GravacSend send, double explore) {
  AdaptDecision d;
  d.send = send;
  d.explore = explore;
  return d;
}

TEST(Link, GravacSelectionSwitchesPayloadsWithoutDroppingTheResidual) {
  Link::Settings s;
  s.backward.method = "topk";
  s.backward.feedback = "ef";
  s.backward.adapt = "gravac";
  s.backward.k = 0.3;  // GraVAC starts at theta_min whatever k says
  Link link(0, {100, 0, false}, s);
  EXPECT_DOUBLE_EQ(link.options(Direction::Backward).k, 0.1);
  torch::manual_seed(8);
  const auto x = torch::randn({2000});
  double clock = 0;
  link.send(Direction::Backward, x, 0);
  EXPECT_EQ(link.receive(Direction::Backward, torch::kCPU, clock).ne(0).sum().item<int64_t>(), 200);
  auto t = link.takeTraffic(Direction::Backward);
  EXPECT_NEAR(t.measures.at(adapt_measure::kGravacRaw), x.norm().item<double>(), 1e-3);
  EXPECT_EQ(t.method, "topk 10% + ef (GraVAC)");

  link.applyDecision(Direction::Backward, select(GravacSend::Current, 0.025));
  EXPECT_DOUBLE_EQ(link.options(Direction::Backward).k, 0.025);
  link.send(Direction::Backward, torch::zeros({2000}), 0);
  const auto residual = link.receive(Direction::Backward, torch::kCPU, clock);
  EXPECT_EQ(residual.ne(0).sum().item<int64_t>(), 50) << "the residual of the first message went out at 2.5%";

  link.applyDecision(Direction::Backward, select(GravacSend::Dense, 0.025));
  EXPECT_DOUBLE_EQ(link.options(Direction::Backward).k, 1.0);
  link.send(Direction::Backward, x, 0);
  EXPECT_TRUE(torch::equal(link.receive(Direction::Backward, torch::kCPU, clock), x));
  EXPECT_THROW(link.applyDecision(Direction::Forward, select(GravacSend::Dense, 0.1)), std::logic_error);
}

// The dense tensor TopK keeps of p: its k largest magnitudes.
torch::Tensor keepLargest(const torch::Tensor& p, int64_t k) {
  auto kept = torch::zeros_like(p);
  const auto idx = std::get<1>(p.abs().topk(k));
  kept.index_put_({idx}, p.index({idx}));
  return kept;
}

// A new K (by hand or by Accordion) keeps the error-feedback residual at the sender and EF21's estimate at both ends:
// the message after the change is what a link with the new K and the old state sends. A change of compensation
// starts both ends afresh and says so.
TEST(Link, ANewKKeepsTheCompensationStateAtBothEnds) {
  for (const std::string feedback : {"ef", "ef21"}) {
    for (const std::string adapt : {"none", "accordion"}) {
      Link::Settings s;
      s.forward.method = "topk";
      s.forward.feedback = feedback;
      s.forward.adapt = adapt;
      s.forward.k = 0.1;
      Link link(0, {100, 0, false}, s);
      torch::manual_seed(21);
      auto state = torch::zeros({1000});  // EF: the residual e; EF21: the shared estimate g
      double clock = 0;
      auto step = [&](const torch::Tensor& x, int64_t k) {  // the reference, and what the link does
        torch::Tensor want;
        if (feedback == "ef") {
          const auto p = x + state;
          want = keepLargest(p, k);
          state = p - want;
        } else {
          state = state + keepLargest(x - state, k);
          want = state;
        }
        link.send(Direction::Forward, x, 0);
        const auto got = link.receive(Direction::Forward, torch::kCPU, clock);
        ASSERT_TRUE(torch::allclose(got, want, 0, 1e-6)) << feedback << " " << adapt << " k " << k;
      };
      for (int i = 0; i < 3; ++i) step(torch::randn({1000}), 100);
      CompressionOptions smaller = s.forward;
      smaller.k = 0.02;
      EXPECT_FALSE(link.setOptions(Direction::Forward, smaller)) << "nothing was dropped";
      EXPECT_DOUBLE_EQ(link.options(Direction::Forward).k, 0.02);
      for (int i = 0; i < 2; ++i) step(torch::randn({1000}), 20);
      // The codec within its family (GaussianK is a sparsifier too) keeps it; a change of compensation does not.
      CompressionOptions gaussian = smaller;
      gaussian.method = "gaussiank";
      EXPECT_FALSE(link.setOptions(Direction::Forward, gaussian));
      CompressionOptions other = smaller;
      other.feedback = feedback == "ef" ? "ef21" : "ef";
      EXPECT_TRUE(link.setOptions(Direction::Forward, other)) << "a change of compensation drops the state";
      CompressionOptions quantized = other;
      quantized.method = "quantize";
      EXPECT_TRUE(link.setOptions(Direction::Forward, quantized)) << "a sparsifier's state is not a quantizer's";
    }
  }
  // GraVAC keeps its residuals itself, through its decisions: a new setting builds it afresh.
  CompressionOptions gravac;
  gravac.method = "topk", gravac.feedback = "ef", gravac.adapt = "gravac";
  CompressionOptions plain = gravac;
  plain.adapt = "none";
  EXPECT_FALSE(gravac.keepsCompensationOf(gravac));
  EXPECT_FALSE(plain.keepsCompensationOf(gravac));
  EXPECT_TRUE(plain.keepsCompensationOf(plain));
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

// The far end of a link in "another process": remembers the limit the receiver asked for.
class RecordingRemote : public RemoteEnd {
 public:
  void push(Message m) override { held_.push_back(std::move(m)); }
  Message pop(uint64_t limit) override {
    limits.push_back(limit);
    Message m = std::move(held_.front());
    held_.erase(held_.begin());
    return m;
  }
  std::vector<uint64_t> limits;

 private:
  std::vector<Message> held_;
};

// A stage knows what it waits for (the micro-batch's activation shape forward, the shape it sent backward): a
// payload of another shape is refused before decoding, and a remote message larger than that shape's largest
// payload before it is received.
TEST(Link, AReceiverRefusesAnotherShapeThanItExpects) {
  for (const std::string method : {"none", "topk"}) {
    Link::Settings settings;
    settings.forward.method = method;
    settings.forward.feedback = method == "none" ? "none" : "ef";
    Link link(0, LinkModel{}, settings);
    auto remote = std::make_shared<RecordingRemote>();
    link.connectRemote(Direction::Forward, remote);
    double clock = 0;
    const std::vector<int64_t> right{4, 8}, wrong{4, 9};
    MessageMeta meta;
    link.send(Direction::Forward, torch::randn({4, 8}), 0);
    meta.shape = &right;
    EXPECT_EQ(link.receive(Direction::Forward, torch::kCPU, clock, meta).sizes(), torch::IntArrayRef({4, 8}));
    ASSERT_EQ(remote->limits.size(), 1u);
    EXPECT_EQ(remote->limits[0], maxPayloadBytes(right)) << method;
    link.send(Direction::Forward, torch::randn({4, 8}), 0);
    meta.shape = &wrong;
    try {
      link.receive(Direction::Forward, torch::kCPU, clock, meta);
      ADD_FAILURE() << method << ": decoded a payload of another shape";
    } catch (const PayloadError& e) {
      EXPECT_NE(std::string(e.what()).find("shape [4, 8] where the receiver expects [4, 9]"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ps
