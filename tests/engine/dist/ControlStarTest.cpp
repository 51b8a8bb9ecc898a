// Collectives among all ranks over a star of link streams around rank 0: a broadcast reaches every rank, a gather
// gives every rank the same parts in rank order, step after step; gathered lists from rank 0 and parts sent to it are
// untrusted (counts, sizes, leftovers).
#include "engine/dist/Cluster.h"
#include "engine/dist/ControlStar.h"
#include "tests/engine/dist/ShareBoard.h"

#include <gtest/gtest.h>

#include <cstring>
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

TEST(ControlStar, GatheredListsAreCheckedAsUntrusted) {
  const std::vector<std::vector<uint8_t>> parts{{1, 2}, {}, {3, 4, 5}};
  const auto list = ControlStar::pack(parts);
  EXPECT_EQ(ControlStar::unpack(list, 3, 10), parts);
  auto refused = [](const std::vector<uint8_t>& bytes, int world, uint64_t limit) {
    try {
      ControlStar::unpack(bytes, world, limit);
    } catch (const ClusterError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused(list, 4, 10).find("3 parts for 4 ranks"), std::string::npos);
  EXPECT_NE(refused(list, 3, 2).find("part 2 claims 3 bytes"), std::string::npos);
  EXPECT_NE(refused({list.begin(), list.end() - 1}, 3, 10).find("part 2 claims 3 bytes"), std::string::npos);
  auto longer = list;
  longer.push_back(0);
  EXPECT_NE(refused(longer, 3, 10).find("1 bytes left over"), std::string::npos);
  EXPECT_NE(refused({3, 0}, 3, 10).find("parts for 3 ranks"), std::string::npos);
  auto huge = list;
  const uint64_t lie = ~uint64_t(0);
  std::memcpy(huge.data() + 4, &lie, 8);
  EXPECT_NE(refused(huge, 3, ~uint64_t(0)).find("part 0 claims"), std::string::npos);
}

}  // namespace
}  // namespace ps
