// Collectives among a stage's replicas over a mesh of link streams: every member gathers the same parts in member
// order, an all-reduce leaves the same sum on every member to the last bit, round after round; a part of the wrong
// size is refused naming its member, and a connection from another process cannot take a member's place.
#include "engine/dist/Cluster.h"
#include "engine/dist/ReplicaMesh.h"
#include "tests/ListeningSockets.h"
#include "tests/engine/dist/ShareBoard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ps {
namespace {

std::string name(int i) {
  return "replica " + std::to_string(i);
}

std::vector<std::unique_ptr<ReplicaMesh>> meshes(int n, Board& board, double timeout = 10) {
  std::vector<std::future<std::unique_ptr<ReplicaMesh>>> making;
  for (int i = 0; i < n; ++i)
    making.push_back(std::async(std::launch::async, [&, i] {
      return std::make_unique<ReplicaMesh>(i, n, "replicas/stage0", "127.0.0.1", "secret", timeout, name,
                                           board.share());
    }));
  std::vector<std::unique_ptr<ReplicaMesh>> out;
  for (auto& m : making) out.push_back(m.get());
  return out;
}

// Values whose sum depends on the order they are added in.
std::vector<float> valuesOf(int member, int round, int count) {
  std::vector<float> v(static_cast<size_t>(count), 0.f);
  for (int k = 0; k < count; ++k)
    v[size_t(k)] = float((member + 1) * 1e7) * (k % 2 ? 1.f : -1.f) + 0.1f * float(k + round);
  return v;
}

TEST(ReplicaMesh, GathersAndSumsAlikeOnEveryMemberRoundAfterRound) {
  Board board;
  const int n = 3, count = 1000;
  auto all = meshes(n, board);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::future<std::pair<std::vector<std::vector<uint8_t>>, std::vector<float>>>> members;
    for (int i = 0; i < n; ++i)
      members.push_back(std::async(std::launch::async, [&, i] {
        auto parts = all[size_t(i)]->allGather(std::vector<uint8_t>(size_t(i + round), uint8_t(i)), 64);
        auto values = valuesOf(i, round, count);
        all[size_t(i)]->allReduce(values.data(), count);
        return std::make_pair(parts, values);
      }));
    std::vector<float> expected(size_t(count), 0.f);
    for (int i = 0; i < n; ++i) {
      const auto v = valuesOf(i, round, count);
      for (int k = 0; k < count; ++k) expected[size_t(k)] += v[size_t(k)];
    }
    for (int i = 0; i < n; ++i) {
      const auto [parts, sum] = members[size_t(i)].get();
      ASSERT_EQ(parts.size(), size_t(n));
      for (int j = 0; j < n; ++j) EXPECT_EQ(parts[size_t(j)], std::vector<uint8_t>(size_t(j + round), uint8_t(j)));
      EXPECT_EQ(std::memcmp(sum.data(), expected.data(), sizeof(float) * count), 0)
          << "member " << i << " summed otherwise in round " << round;
    }
  }
}

// Large all-reduces among three or more replicas go round a ring: every member still ends with the same bits, the
// sum within float rounding, round after round (buffers reused while the streams may still hold the last ones).
TEST(ReplicaMesh, ARingAllReduceLeavesTheSameSumOnEveryMember) {
  for (const int n : {3, 4}) {
    Board board;
    const int count = 300001;  // over the ring's threshold, and not a multiple of n
    auto all = meshes(n, board);
    for (int round = 0; round < 3; ++round) {
      std::vector<std::future<std::vector<float>>> members;
      for (int i = 0; i < n; ++i)
        members.push_back(std::async(std::launch::async, [&, i] {
          auto values = valuesOf(i, round, count);
          all[size_t(i)]->allReduce(values.data(), count);
          return values;
        }));
      std::vector<std::vector<float>> sums;
      for (auto& m : members) sums.push_back(m.get());
      double worst = 0;
      for (int i = 1; i < n; ++i)
        ASSERT_EQ(std::memcmp(sums[size_t(i)].data(), sums[0].data(), sizeof(float) * count), 0)
            << "member " << i << " of " << n << " holds other bits in round " << round;
      std::vector<double> exact(static_cast<size_t>(count), 0.0);
      for (int i = 0; i < n; ++i) {
        const auto v = valuesOf(i, round, count);
        for (int k = 0; k < count; ++k) exact[size_t(k)] += double(v[size_t(k)]);
      }
      for (int k = 0; k < count; ++k) worst = std::max(worst, std::abs(double(sums[0][size_t(k)]) - exact[size_t(k)]));
      EXPECT_LT(worst, 8.0) << "values of size 1e7 summed in float: within a few ulps";  // ulp(4e7) = 4
    }
  }
}

TEST(ReplicaMesh, APartOverTheLimitOrOfTheWrongLengthIsRefusedNamingItsMember) {
  Board board;
  auto all = meshes(2, board, 3);
  auto big = std::async(std::launch::async, [&] { return all[1]->allGather(std::vector<uint8_t>(100, 1), 1000); });
  std::string error;
  try {
    all[0]->allGather(std::vector<uint8_t>(10, 0), 50);
  } catch (const ClusterError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("replica 1"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 50 bytes"), std::string::npos) << error;
  big.wait();

  Board board2;
  auto pair = meshes(2, board2, 3);
  std::vector<float> three(3, 1.f), four(4, 1.f);
  auto other = std::async(std::launch::async, [&] {
    try {
      pair[1]->allReduce(four.data(), 4);
    } catch (const ClusterError&) {
    }
  });
  error.clear();
  try {
    pair[0]->allReduce(three.data(), 3);
  } catch (const ClusterError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("replica 1"), std::string::npos) << error;
  other.wait();
}

// Connections made to every member's listening ends as soon as they are published, before the members connect to
// each other (one silent, one with a hello of nonsense), are ignored; the mesh forms and its all-reduce is right.
TEST(ReplicaMesh, AStrangerCannotTakeAReplicasPlace) {
  Board board;
  std::mutex mutex;
  std::vector<int> strangers;
  const LinkStream::Share share = [&](const std::string& key, bool publish, const std::vector<uint8_t>& mine) {
    auto value = board.share()(key, publish, mine);
    if (!publish) return value;
    const std::string where(mine.begin(), mine.end());  // "127.0.0.1\nPORT"
    const int port = std::stoi(where.substr(where.find('\n') + 1));
    for (int k = 0; k < 2; ++k) {
      const int fd = test::connectToLoopback(port);
      EXPECT_GE(fd, 0);
      if (k == 1) (void)!::send(fd, "PPSLINK1garbage!", 16, MSG_NOSIGNAL);
      std::lock_guard<std::mutex> lock(mutex);
      strangers.push_back(fd);
    }
    return value;
  };
  std::vector<std::future<std::vector<float>>> members;
  for (int i = 0; i < 2; ++i)
    members.push_back(std::async(std::launch::async, [&, i] {
      ReplicaMesh mesh(i, 2, "replicas/stage0", "127.0.0.1", "secret", 10, name, share);
      std::vector<float> v{float(i + 1), float(10 * (i + 1))};
      mesh.allReduce(v.data(), 2);
      return v;
    }));
  for (auto& m : members) EXPECT_EQ(m.get(), (std::vector<float>{3.f, 30.f}));
  EXPECT_EQ(strangers.size(), 4u) << "a stranger at each of the two listening ends, twice";
  for (int fd : strangers) ::close(fd);
}

}  // namespace
}  // namespace ps
