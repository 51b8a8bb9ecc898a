// Collectives among all ranks over a star of link streams around rank 0: a broadcast reaches every rank, a gather
// gives every rank the same parts in rank order, step after step, and a part over the limit is refused naming its
// rank (the gathered list's own checks are Framing's).
#include "engine/dist/Cluster.h"
#include "engine/dist/ControlStar.h"
#include "tests/engine/dist/ShareBoard.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <vector>

namespace ps {
namespace {

std::string name(int r) { return "rank " + std::to_string(r); }

// `world` stars made at once, as the ranks of a run make theirs.
std::vector<std::unique_ptr<ControlStar>> stars(int world, Board& board, double timeout = 10) {
  std::vector<std::future<std::unique_ptr<ControlStar>>> making;
  for (int r = 0; r < world; ++r)
    making.push_back(std::async(std::launch::async, [&, r] {
      return std::make_unique<ControlStar>(r, world, "127.0.0.1", "secret", timeout, name, board.share());
    }));
  std::vector<std::unique_ptr<ControlStar>> out;
  for (auto& m : making) out.push_back(m.get());
  return out;
}

std::vector<uint8_t> partOf(int rank, int step) {
  return std::vector<uint8_t>(size_t((rank * 37 + step * 11) % 300), uint8_t(rank * 16 + step));
}

TEST(ControlStar, BroadcastsAndGathersReachEveryRankInOrderStepAfterStep) {
  Board board;
  auto all = stars(3, board);
  for (int step = 0; step < 40; ++step) {
    std::vector<std::future<std::pair<std::vector<uint8_t>, std::vector<std::vector<uint8_t>>>>> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.push_back(std::async(std::launch::async, [&, r] {
        auto commands = all[size_t(r)]->broadcast(r == 0 ? partOf(9, step) : std::vector<uint8_t>{}, 1000);
        return std::make_pair(commands, all[size_t(r)]->allGather(partOf(r, step), 1000));
      }));
    for (auto& f : ranks) {
      const auto [commands, parts] = f.get();
      EXPECT_EQ(commands, partOf(9, step));
      ASSERT_EQ(parts.size(), 3u);
      for (int r = 0; r < 3; ++r) EXPECT_EQ(parts[size_t(r)], partOf(r, step)) << "step " << step << " rank " << r;
    }
  }
}

// Ranks whose clocks read apart (as on several machines) learn rank 0's reading of theirs: the skew, to within the
// bound each measured, and that bound a fraction of a millisecond on loopback.
TEST(ControlStar, EachRankFindsRankZerosClockWithinItsBound) {
  Board board;
  auto all = stars(3, board);
  const int64_t skew[] = {0, 5'000'000'000, -7'250'000'123};  // nanoseconds each rank's clock reads ahead
  std::vector<std::future<ClockOffset>> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      return all[size_t(r)]->clockOffset(8, [&] {
        const auto now = std::chrono::steady_clock::now().time_since_epoch();
        return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) + skew[r];
      });
    }));
  for (int r = 0; r < 3; ++r) {
    const ClockOffset c = ranks[size_t(r)].get();
    EXPECT_GE(c.bound_ns, 0) << "rank " << r;
    EXPECT_LT(c.bound_ns, 50'000'000) << "rank " << r << ": half a round trip on loopback";
    EXPECT_LE(std::abs(c.offset_ns + skew[r]), c.bound_ns) << "rank " << r << " measured " << c.offset_ns;
  }
  // The star carries on with its collectives after the measurement.
  std::vector<std::future<std::vector<uint8_t>>> after;
  for (int r = 0; r < 3; ++r)
    after.push_back(std::async(std::launch::async, [&, r] {
      return all[size_t(r)]->broadcast(r == 0 ? partOf(9, 1) : std::vector<uint8_t>{}, 1000);
    }));
  for (auto& f : after) EXPECT_EQ(f.get(), partOf(9, 1));
}

// Rank 0's reading is untrusted like every message: a reading of another size, or one no clock could give (70 years
// and more from this rank's), ends the measurement with an error naming rank 0.
TEST(ControlStar, ABadClockReadingIsRefusedNamingRankZero) {
  for (const auto& reading : {std::vector<uint8_t>{1, 2, 3, 4}, std::vector<uint8_t>(8, 0x7f)}) {
    Board board;
    auto all = stars(2, board);
    auto zero = std::async(std::launch::async, [&] {  // a rank 0 that answers the trip with `reading`
      all[0]->allGather({}, 0);
      all[0]->broadcast(reading, 8);
    });
    try {
      all[1]->clockOffset(1, [] { return int64_t(1'000'000'000); });
      ADD_FAILURE() << "a reading of " << reading.size() << " bytes was taken";
    } catch (const ClusterError& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0 sent a clock reading that is not one (" +
                                           std::to_string(reading.size()) + " bytes"),
                std::string::npos)
          << e.what();
    }
    zero.get();
  }
}

TEST(ControlStar, APartOverTheLimitIsRefusedNamingItsRank) {
  Board board;
  auto all = stars(2, board);
  auto one = std::async(std::launch::async, [&] {
    try {
      all[1]->allGather(std::vector<uint8_t>(2000), 1000);
    } catch (const ClusterError&) {  // rank 0 gave up on the gather and went away
    }
  });
  try {
    all[0]->allGather({1, 2, 3}, 1000);
    ADD_FAILURE() << "rank 0 took a part over the limit";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent a message announcing 2000 bytes"), std::string::npos)
        << e.what();
  }
  all[0].reset();  // rank 1 waits for the list: rank 0's star closing ends its wait
  one.get();
}

TEST(ControlStar, ARankThatReachesTheStarLateStillGetsWhatRankZeroSentBeforeLeaving) {
  // Rank 1 looks up rank 0's listening end only once rank 0 has broadcast and closed its star: rank 0 must not have
  // gone before every rank connected.
  Board board;
  std::promise<void> rankZeroDone;
  auto done = rankZeroDone.get_future().share();
  auto lateShare = [&, inner = board.share()](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
    if (key == "control/up/1" && !publish) done.wait_for(std::chrono::milliseconds(500));
    return inner(key, publish, mine);
  };
  auto zero = std::async(std::launch::async, [&] {
    ControlStar star(0, 2, "127.0.0.1", "secret", 10, name, board.share());
    star.broadcast({4, 5, 6}, 100);
  });
  auto one = std::async(std::launch::async, [&] {
    ControlStar star(1, 2, "127.0.0.1", "secret", 10, name, lateShare);
    return star.broadcast({}, 100);
  });
  // Rank 0 finishes (broadcast sent, star closed) either before the late lookup's wait ends or, once it waits for
  // every rank to connect, only after it.
  zero.get();
  rankZeroDone.set_value();
  std::vector<uint8_t> got;
  try {
    got = one.get();
  } catch (const ClusterError& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(got, (std::vector<uint8_t>{4, 5, 6}));
}

}  // namespace
}  // namespace ps
