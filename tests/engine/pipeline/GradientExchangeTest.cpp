// The data-parallel gradient exchange with its ranks as threads of this process (each with its own Gloo
// connections over loopback): unequal sparse payloads, per-replica error feedback, untrusted bytes.
#include "engine/compress/Codec.h"
#include "engine/dist/Framing.h"
#include "engine/pipeline/GradientExchange.h"
#include "engine/pipeline/PowerSgdReducer.h"
#include "engine/pipeline/GradientMessage.h"
#include "tests/engine/RankThreads.h"

#include <gtest/gtest.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace ps {
namespace {

// Runs body(rank, cluster) on `world` threads, one Cluster each (1 stage x `world` replicas); rethrows the first error.
void onRanks(int world, const std::function<void(int, std::shared_ptr<Cluster>)>& body) {
  const auto errors = test::onRankThreads(
      world, [&](const ClusterOptions& o) { body(o.rank, std::make_shared<Cluster>(o, 1, world)); });
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[size_t(r)], "") << "rank " << r;
}

// Replica r's gradient: a different scale and tail per replica, so GaussianK keeps different counts. Made once,
// before the rank threads start (torch's default generator is shared by every thread).
torch::Tensor gradientOf(int replica, int64_t n) {
  static std::mutex mutex;
  static std::map<std::pair<int, int64_t>, torch::Tensor> made;
  std::lock_guard<std::mutex> lock(mutex);
  auto& g = made[{replica, n}];
  if (!g.defined()) {
    auto generator = at::detail::createCPUGenerator(uint64_t(100 + replica));
    g = torch::randn({n}, generator) * (1.0 + replica);
    if (replica == 1) g = g * torch::rand({n}, generator).pow(4) * 3;  // heavy-tailed
  }
  return g.clone();
}

TEST(GradientExchange, SparseAllGatherWithUnequalCountsGivesEveryReplicaTheMeanOfTheDecodedPayloads) {
  constexpr int kWorld = 3;
  constexpr int64_t kN = 20000;
  CompressionOptions o;
  o.method = "gaussiank";
  o.k = 0.05;
  // What every replica must end with: the mean of each replica's decode(encode(g_r)), in replica order.
  auto codec = makeCodec(o);
  torch::Tensor expected = torch::zeros({kN});
  std::vector<uint64_t> counts;
  for (int r = 0; r < kWorld; ++r) {
    auto p = codec->encode(gradientOf(r, kN));
    counts.push_back(p.values);
    expected += codec->decode(p, torch::kCPU);
  }
  expected /= kWorld;
  ASSERT_NE(counts[0], counts[1]);
  ASSERT_NE(counts[1], counts[2]);

  std::vector<torch::Tensor> results(kWorld);
  std::vector<LinkTraffic> traffic(kWorld);
  onRanks(kWorld, [&](int rank, std::shared_ptr<Cluster> cluster) {
    GradientExchange exchange(cluster, 0, o, 7, LinkModel{100, 0});
    auto w = torch::zeros({100, 200}, torch::requires_grad());
    w.mutable_grad() = gradientOf(rank, kN).view({100, 200}).clone();
    double clock = 0.01 * rank;
    exchange.reduce({w}, clock);
    results[size_t(rank)] = w.grad().reshape(-1).clone();
    traffic[size_t(rank)] = exchange.takeTraffic();
    EXPECT_GE(clock, 0.02) << "continues from the slowest replica's clock";
  });
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_TRUE(results[size_t(r)].defined());
    EXPECT_TRUE(torch::equal(results[size_t(r)], results[0])) << "replicas stay bit-identical";
    EXPECT_TRUE(torch::allclose(results[size_t(r)], expected, 1e-6, 1e-7)) << "rank " << r;
    EXPECT_EQ(traffic[size_t(r)].nonzeros, counts[size_t(r)]);
    EXPECT_EQ(traffic[size_t(r)].direction, Direction::Gradients);
    EXPECT_EQ(traffic[size_t(r)].raw_bytes, uint64_t(2.0 * 2 / 3 * 4 * kN));
    EXPECT_GT(traffic[size_t(r)].modelled_s, 0);
  }
}

TEST(GradientExchange, ErrorFeedbackIsKeptPerReplica) {
  // TopK with EF: what a replica sends over two steps is its own x1 + x2 minus its own residual.
  CompressionOptions o;
  o.method = "topk";
  o.k = 0.1;
  o.feedback = "ef";
  std::vector<std::vector<torch::Tensor>> seen(2);
  onRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
    GradientExchange exchange(cluster, 0, o, 7, LinkModel{});
    auto w = torch::zeros({1000}, torch::requires_grad());
    for (int step = 0; step < 2; ++step) {
      w.mutable_grad() = gradientOf(rank + 2 * step, 1000).clone();
      double clock = 0;
      exchange.reduce({w}, clock);
      seen[size_t(rank)].push_back(w.grad().clone());
    }
  });
  // Reference: each replica's own compensator, the mean of both.
  auto reference = [&](int step) {
    torch::Tensor mean = torch::zeros({1000});
    for (int r = 0; r < 2; ++r) {
      Compensator sender(o, {}, {});
      SendReport report;
      torch::Tensor used;
      for (int s = 0; s <= step; ++s) {
        auto payload = sender.send(gradientOf(r + 2 * s, 1000), {}, report);
        used = makeCodec(o)->decode(payload, torch::kCPU);
      }
      mean += used;
    }
    return mean / 2;
  };
  for (int step = 0; step < 2; ++step)
    for (int r = 0; r < 2; ++r)
      EXPECT_TRUE(torch::allclose(seen[size_t(r)][size_t(step)], reference(step), 1e-6, 1e-7))
          << "rank " << r << " step " << step;
}

// A new K between steps keeps every replica's residual: the step after it sends what EF with the new K sends from
// the old residual (it used to start from zero).
TEST(GradientExchange, ANewKKeepsEveryReplicasResidual) {
  CompressionOptions o;
  o.method = "topk";
  o.k = 0.1;
  o.feedback = "ef";
  std::vector<torch::Tensor> after(2);
  onRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
    GradientExchange exchange(cluster, 0, o, 7, LinkModel{});
    auto w = torch::zeros({1000}, torch::requires_grad());
    for (int step = 0; step < 2; ++step) {
      if (step == 1) {
        CompressionOptions smaller = o;
        smaller.k = 0.02;
        exchange.setOptions(smaller);
      }
      w.mutable_grad() = gradientOf(rank + 2 * step, 1000).clone();
      double clock = 0;
      exchange.reduce({w}, clock);
    }
    after[size_t(rank)] = w.grad().clone();
  });
  auto keep = [](const torch::Tensor& p, int64_t k) {
    auto kept = torch::zeros_like(p);
    const auto idx = std::get<1>(p.abs().topk(k));
    kept.index_put_({idx}, p.index({idx}));
    return kept;
  };
  torch::Tensor mean = torch::zeros({1000});
  for (int r = 0; r < 2; ++r) {
    const auto first = gradientOf(r, 1000);
    const auto residual = first - keep(first, 100);
    mean += keep(gradientOf(r + 2, 1000) + residual, 20);
  }
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(torch::allclose(after[size_t(r)], mean / 2, 1e-6, 1e-7)) << "rank " << r;
}

// PowerSGD between replicas as PyTorch's hook runs it: one shared subspace found by all-reduces. Restated here on the
// replicas' mean gradient with one residual (the mean of theirs), orthonormalising by QR: the mean residual is
// the mean input minus the shared update, so the replicas' updates must equal this single-process computation.
TEST(PowerSgdReducer, ReplicasShareOneSubspaceAndUpdateAsTheMeanGradientWould) {
  constexpr int kWorld = 2, kSteps = 4;
  constexpr uint64_t kSeed = 99;
  const std::vector<int64_t> weight = {64, 48}, bias = {64};
  std::vector<std::vector<torch::Tensor>> updates(kWorld), qs(kWorld);
  std::vector<std::vector<int64_t>> crossed(kWorld);
  onRanks(kWorld, [&](int rank, std::shared_ptr<Cluster> cluster) {
    PowerSgdReducer reducer(2, 1, 2.0, true, kSeed);  // one dense step first
    for (int step = 0; step < kSteps; ++step) {
      std::vector<torch::Tensor> grads = {gradientOf(rank + 2 * step, 64 * 48).view(weight).clone(),
                                          gradientOf(rank + 2 * step, 64).clone()};
      crossed[size_t(rank)].push_back(reducer.reduce(grads, kWorld, [&](float* v, int64_t n, double) {
        cluster->allReduceReplicas(v, n);
      }));
      updates[size_t(rank)].push_back(torch::cat({grads[0].reshape(-1), grads[1]}));
      qs[size_t(rank)].push_back(step > 0 ? reducer.q(0).clone() : torch::Tensor());
    }
  });
  auto orth = [](const torch::Tensor& a) { return std::get<0>(torch::linalg_qr(a)); };
  torch::Tensor residualW = torch::zeros(weight), q = PowerSgdReducer::initialQ(kSeed, 0, 48, 2);
  for (int step = 0; step < kSteps; ++step) {
    torch::Tensor meanW = torch::zeros(weight), meanB = torch::zeros(bias);
    for (int r = 0; r < kWorld; ++r) {
      meanW += gradientOf(r + 2 * step, 64 * 48).view(weight) / kWorld;
      meanB += gradientOf(r + 2 * step, 64) / kWorld;
    }
    torch::Tensor want;
    if (step == 0) {
      want = torch::cat({meanW.reshape(-1), meanB});
    } else {
      const auto M = meanW + residualW;
      const auto P = orth(torch::mm(M, orth(q)));
      q = torch::mm(M.t(), P);
      const auto update = torch::mm(P, q.t());
      residualW = M - update;
      want = torch::cat({update.reshape(-1), meanB});  // the bias (64 x 1 at rank 1) is all-reduced whole
      for (int r = 0; r < kWorld; ++r)
        EXPECT_TRUE(torch::allclose(qs[size_t(r)][size_t(step)].abs(), q.abs(), 1e-4, 1e-5))
            << "the shared Q, up to the sign of a column; rank " << r << " step " << step;
    }
    for (int r = 0; r < kWorld; ++r) {
      EXPECT_TRUE(torch::allclose(updates[size_t(r)][size_t(step)], want, 1e-4, 1e-5))
          << "rank " << r << " step " << step;
      EXPECT_TRUE(torch::equal(updates[size_t(r)][size_t(step)], updates[0][size_t(step)])) << "replicas agree";
      EXPECT_EQ(crossed[size_t(r)][size_t(step)], step == 0 ? 64 * 48 + 64 : 64 * 2 + 48 * 2 + 64);
    }
  }
}

// The exchange sends PowerSGD's factors by all-reduce: what a replica puts on the wire is a ring all-reduce of
// P, Q and the whole tensors, which does not grow with the replicas (an all-gather of every replica's factors did).
TEST(GradientExchange, PowerSgdAllReducesFactorsWhoseBytesDoNotGrowWithTheReplicas) {
  CompressionOptions o;
  o.method = "powersgd";
  o.feedback = "ef";
  o.extra["rank"] = 2;
  o.extra["start_iter"] = 0;
  for (int world : {2, 3}) {
    std::vector<LinkTraffic> traffic(static_cast<size_t>(world));
    std::vector<torch::Tensor> grads(static_cast<size_t>(world));
    onRanks(world, [&](int rank, std::shared_ptr<Cluster> cluster) {
      GradientExchange exchange(cluster, 0, o, 7, LinkModel{100, 0});
      auto w = torch::zeros({64, 48}, torch::requires_grad());
      auto b = torch::zeros({64}, torch::requires_grad());
      w.mutable_grad() = gradientOf(rank, 64 * 48).view({64, 48}).clone();
      b.mutable_grad() = gradientOf(rank, 64).clone();
      double clock = 0;
      exchange.reduce({w, b}, clock);
      traffic[size_t(rank)] = exchange.takeTraffic();
      grads[size_t(rank)] = w.grad().clone();
    });
    const double r = world;
    uint64_t want = 0;
    for (int64_t values : {int64_t(64), int64_t(64 * 2), int64_t(48 * 2)})  // bias whole, P, Q
      want += uint64_t(2.0 * (r - 1) / r * 4.0 * double(values));
    for (int k = 0; k < world; ++k) {
      EXPECT_EQ(traffic[size_t(k)].wire_bytes, want) << world << " replicas";
      EXPECT_TRUE(torch::equal(grads[size_t(k)], grads[0]));
      const auto singular = std::get<1>(torch::svd(grads[size_t(k)]));
      EXPECT_LT(singular[2].item<double>(), 1e-4 * singular[0].item<double>()) << "a rank-2 update";
    }
    EXPECT_LT(want, 2u * 4u * (64 + 128 + 96)) << "never more than twice the factors, whatever the replicas";
  }
}

// Each parameter reaches its codec in its own shape: PowerSGD compresses a weight matrix as a matrix (the exchange
// used to flatten every gradient, so PowerSGD saw vectors and sent them all dense). With EF21 around it, PowerSGD is
// a per-replica codec whose payloads are all-gathered (with EF or none it runs as the hook's all-reduces, above).
TEST(GradientExchange, CodecsSeeEachParametersShape) {
  CompressionOptions o;
  o.method = "powersgd";
  o.extra["rank"] = 2;
  o.feedback = "ef21";
  std::vector<LinkTraffic> traffic(2);
  std::vector<torch::Tensor> results(2);
  onRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
    GradientExchange exchange(cluster, 0, o, 7, LinkModel{100, 0});
    auto w = torch::zeros({64, 80}, torch::requires_grad());
    auto g = torch::mm(gradientOf(rank, 64 * 2).view({64, 2}), gradientOf(rank + 2, 2 * 80).view({2, 80}));
    w.mutable_grad() = g.clone();  // rank 2 per replica: PowerSGD at rank 2 sends it exactly
    double clock = 0;
    exchange.reduce({w}, clock);
    results[size_t(rank)] = w.grad().clone();
    traffic[size_t(rank)] = exchange.takeTraffic();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(traffic[size_t(r)].nonzeros, uint64_t(2 * (64 + 80))) << "rank " << r;
    EXPECT_LT(traffic[size_t(r)].wire_bytes, uint64_t(64 * 80 * 4 / 4));
  }
  auto expected = (torch::mm(gradientOf(0, 128).view({64, 2}), gradientOf(2, 160).view({2, 80})) +
                   torch::mm(gradientOf(1, 128).view({64, 2}), gradientOf(3, 160).view({2, 80}))) / 2;
  EXPECT_TRUE(torch::allclose(results[0], expected, 1e-4, 1e-4));
}

// `world` replicas of one TopK 10% stage, the last of them rogue: it sends `rogue` instead of its gradients. Returns
// the error each honest replica's reduce() ended with ("" if none).
std::vector<std::string> errorsAgainstARogueReplica(int world, const std::vector<uint8_t>& rogue) {
  CompressionOptions o;
  o.method = "topk";
  o.k = 0.1;
  std::vector<std::string> errors(size_t(world - 1));
  onRanks(world, [&](int rank, std::shared_ptr<Cluster> cluster) {
    if (rank == world - 1) {
      cluster->allGatherReplicas(rogue);
      return;
    }
    GradientExchange exchange(cluster, 0, o, 7, LinkModel{});
    auto w = torch::zeros({1000}, torch::requires_grad());
    w.mutable_grad() = torch::randn({1000});
    double clock = 0;
    try {
      exchange.reduce({w}, clock);
    } catch (const ClusterError& e) {
      errors[size_t(rank)] = e.what();
    }
  });
  return errors;
}

TEST(GradientExchange, AMalformedPayloadFromAReplicaIsRejectedNamingIt) {
  // A rogue replica: a clock and garbage where the payload belongs.
  const auto errors = errorsAgainstARogueReplica(3, std::vector<uint8_t>(8 + 64, 0xAB));
  for (int r : {0, 1}) {
    EXPECT_NE(errors[size_t(r)].find("rank 2 (stage 0, replica 2) sent malformed gradients"), std::string::npos)
        << errors[size_t(r)];
  }
}

// A replica whose message is well formed but carries a tensor of another shape than the parameter: refused before
// decoding (a shape declared by a peer never sizes an allocation), naming the replica, the tensor and both shapes.
TEST(GradientExchange, APayloadOfAnotherShapeThanTheParameterIsRefused) {
  CompressionOptions o;
  o.method = "topk";
  o.k = 0.1;
  GradientMessageWriter rogue;
  rogue.add(makeCodec(o)->encode(torch::zeros({999})).bytes);
  const auto errors = errorsAgainstARogueReplica(2, rogue.finish(0));
  EXPECT_NE(errors[0].find("rank 1 (stage 0, replica 1) sent malformed gradients: tensor 0: malformed payload: shape "
                           "[999] where the receiver expects [1000]"),
            std::string::npos)
      << errors[0];
}

TEST(Cluster, PointToPointMessagesKeepTheirOrderAndStampAndRejectAWrongWorld) {
  onRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
    cluster->openPointToPoint();  // on every rank at once, as a run whose links go through Gloo does
    if (rank == 0) {
      for (int i = 0; i < 5; ++i) cluster->send(1, 3, std::vector<uint8_t>(size_t(i * 1000), uint8_t(i)), 0.5 * i);
      cluster->send(1, 3, {});  // empty messages are messages too
      std::vector<uint8_t> large(size_t(2 * kChunkBytes + 3));  // travels in three chunks
      for (size_t i = 0; i < large.size(); i += 4096) large[i] = uint8_t(i / 4096);
      cluster->send(1, 4, large, 9.0);
      cluster->flushSends();
      cluster->send(1, 5, std::vector<uint8_t>(1001));  // refused by its header: never taken, never flushed
      cluster->allGatherWorld({});                       // stays connected until rank 1 has refused it
    } else {
      for (int i = 0; i < 5; ++i) {
        double stamp = -1;
        auto bytes = cluster->receive(0, 3, &stamp);
        EXPECT_EQ(bytes.size(), size_t(i * 1000));
        if (!bytes.empty()) EXPECT_EQ(bytes.back(), uint8_t(i));
        EXPECT_EQ(stamp, 0.5 * i);
      }
      EXPECT_TRUE(cluster->receive(0, 3).empty());
      double stamp = 0;
      const auto large = cluster->receive(0, 4, &stamp);
      ASSERT_EQ(large.size(), size_t(2 * kChunkBytes + 3));
      for (size_t i = 0; i < large.size(); i += 4096) ASSERT_EQ(large[i], uint8_t(i / 4096)) << i;
      EXPECT_EQ(stamp, 9.0);
      try {  // a receiver expecting at most 1000 bytes refuses the header of a larger message
        cluster->receive(0, 5, nullptr, nullptr, 1000);
        ADD_FAILURE() << "accepted a message above the receiver's limit";
      } catch (const ClusterError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 0 (stage 0, replica 0) sent a message announcing 1001 bytes, above "
                                             "the 1000 this receiver accepts"),
                  std::string::npos)
            << e.what();
      }
      cluster->allGatherWorld({});
    }
  });
  ClusterOptions o;
  o.world = 3;
  try {
    Cluster c(o, 2, 2);
    FAIL() << "a world of 3 cannot hold 2 stages x 2 replicas";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("WORLD_SIZE = 3 but the run has pipeline.stages = 2 x parallel.replicas = 2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ps
