// The multi-process side of a session with its ranks as threads of this process (each its own Gloo connections over
// loopback): what rank 0 decides reaches every rank, what a rank cannot use is refused with the reason, and a
// single process answers for itself without any connection.
#include "engine/session/RankCoordinator.h"

#include "engine/errors/ConfigError.h"
#include "tests/engine/RankThreads.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace ps {
namespace {

using nlohmann::json;

Config threeStages() {
  return Config::fromJson({{"task", "synthetic"},
                           {"pipeline", {{"stages", 3}}},
                           {"parallel", {{"timeout_s", 20}}},
                           {"train", {{"max_steps", 1}, {"epochs", 0}}}});
}

// Runs body(rank, coordinator) on `world` threads, each a connected coordinator; each rank's error, "" where none.
std::vector<std::string> onRanks(int world, const Config& config,
                                 const std::function<void(int, RankCoordinator&)>& body) {
  return test::onRankThreads(world, [&](const ClusterOptions& o) {
    RankCoordinator ranks;
    ranks.setOptions(o);
    ranks.connect(config);
    body(o.rank, ranks);
  });
}

TEST(RankCoordinator, EveryRankGetsRankZerosCutsChoiceAndCommands) {
  std::vector<std::vector<size_t>> cuts(3);
  std::vector<int> flags(3, -1);
  std::vector<RankCoordinator::Commands> commands(3);
  const auto errors = onRanks(3, threeStages(), [&](int rank, RankCoordinator& ranks) {
    EXPECT_TRUE(ranks.active());
    EXPECT_EQ(ranks.rank(), rank);
    EXPECT_EQ(ranks.world(), 3);
    EXPECT_FALSE(ranks.launched());
    // Measured cuts differ by process; rank 0's are everyone's.
    cuts[size_t(rank)] =
        ranks.agreeOnCuts(rank == 0 ? std::vector<size_t>{0, 2, 4} : std::vector<size_t>{0, 1, 5}, 6, 3);
    flags[size_t(rank)] = ranks.agreeOnFlag(rank == 0);
    CommandQueue::Turn turn;  // only rank 0's is read
    if (rank == 0) {
      turn.sets.push_back(Command::set("train.lr", 0.5));
      turn.paused = true;
    } else {
      turn.stop = true;
    }
    commands[size_t(rank)] = ranks.shareCommands(turn);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(errors[size_t(r)], "") << "rank " << r;
    EXPECT_EQ(cuts[size_t(r)], (std::vector<size_t>{0, 2, 4})) << "rank " << r;
    EXPECT_EQ(flags[size_t(r)], 1) << "rank " << r;
    ASSERT_EQ(commands[size_t(r)].sets.size(), 1u) << "rank " << r;
    EXPECT_EQ(commands[size_t(r)].sets[0].key, "train.lr");
    EXPECT_EQ(commands[size_t(r)].sets[0].value, json(0.5));
    EXPECT_TRUE(commands[size_t(r)].paused);
    EXPECT_FALSE(commands[size_t(r)].stop) << "rank " << r << " followed its own turn instead of rank 0's";
  }
}

TEST(RankCoordinator, CutsThatDoNotFitThisRanksModelAreRefusedNamingThem) {
  const auto errors = onRanks(3, threeStages(), [&](int rank, RankCoordinator& ranks) {
    // Rank 0 cuts a 6-block model; the others were built with 4 blocks, where a cut at 4 is past the end.
    ranks.agreeOnCuts({0, 2, 4}, rank == 0 ? 6 : 4, 3);
  });
  EXPECT_EQ(errors[0], "");
  for (int r = 1; r < 3; ++r)
    EXPECT_NE(errors[size_t(r)].find("rank 0 sent stage cuts [0,2,4] that do not cut this rank's 4 blocks into 3 "
                                     "stages"),
              std::string::npos)
        << errors[size_t(r)];
}

TEST(RankCoordinator, AWorldThatDoesNotFitTheRunIsRefusedBeforeConnecting) {
  ClusterOptions o;
  o.world = 2;  // the config has 3 stages x 1 replica
  o.master_port = freeLoopbackPort();
  RankCoordinator ranks;
  ranks.setOptions(o);
  try {
    ranks.connect(threeStages());
    FAIL() << "a world of 2 was accepted for 3 workers";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("WORLD_SIZE = 2 but the run has pipeline.stages = 3 x parallel.replicas = 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(ranks.active());
}

TEST(RankCoordinator, ASingleProcessAnswersForItself) {
  RankCoordinator ranks;
  ranks.setOptions(ClusterOptions{});  // world 1: whatever the environment says
  ranks.connect(threeStages());
  EXPECT_FALSE(ranks.active());
  EXPECT_EQ(ranks.rank(), 0);
  EXPECT_EQ(ranks.world(), 1);
  EXPECT_FALSE(ranks.launched());
  EXPECT_EQ(ranks.agreeOnCuts({0, 1, 3}, 4, 3), (std::vector<size_t>{0, 1, 3}));
  EXPECT_FALSE(ranks.agreeOnFlag(false));
  CommandQueue::Turn turn;
  turn.sets.push_back(Command::set("train.lr", 0.1));
  turn.stop = true;
  const auto c = ranks.shareCommands(turn);
  ASSERT_EQ(c.sets.size(), 1u);
  EXPECT_TRUE(c.stop);
  EXPECT_FALSE(c.paused);
  EXPECT_EQ(ranks.failureReason("the loss diverged", 1), "the loss diverged");
  EXPECT_TRUE(ranks.awaitLaunched(0).empty());
  ranks.abortLaunched();  // nothing to kill
}

}  // namespace
}  // namespace ps
