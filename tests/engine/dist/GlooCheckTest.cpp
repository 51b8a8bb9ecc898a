// The check a freshly formed Gloo group passes before a run uses it: every rank answers every other with a word only
// the run's own ranks can make, and a peer that is silent or answers wrongly is found in one short wait.
#include "engine/dist/GlooCheck.h"
#include "tests/ListeningSockets.h"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include <unistd.h>

namespace ps {
namespace {

using std::chrono::milliseconds;
using test::connectToLoopback;
using test::listenersOf;

// Two ranks form a Gloo group over loopback in this process and each runs `body` on its own thread.
void onGlooPair(const std::function<void(int, c10d::ProcessGroupGloo&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::atomic<int> done{0};
  auto run = [&](int rank) {
    auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    options->threads = 1;
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, 2, options);
    body(rank, *group);
    ++done;  // both groups stay open until both bodies ended: neither sees the other close
    while (done < 2) std::this_thread::sleep_for(milliseconds(1));
  };
  std::thread peer(run, 1);
  run(0);
  peer.join();
}

TEST(GlooCheck, WordsDifferByTokenAttemptAndDirection) {
  std::set<uint64_t> words;
  for (const std::string token : {"", "secret", "secreu"})
    for (int attempt = 1; attempt <= 3; ++attempt)
      for (int from = 0; from < 3; ++from)
        for (int to = 0; to < 3; ++to) words.insert(glooCheckWord(token, attempt, from, to));
  EXPECT_EQ(words.size(), size_t(3 * 3 * 3 * 3));
}

TEST(GlooCheck, TheRunsOwnRanksAnswer) {
  bool answered[2] = {false, false};
  onGlooPair([&](int rank, c10d::ProcessGroupGloo& group) {
    std::string why;
    answered[rank] = glooGroupAnswers(group, rank, 2, "run-token", 1, milliseconds(5000), &why);
    EXPECT_TRUE(why.empty()) << why;
  });
  EXPECT_TRUE(answered[0]);
  EXPECT_TRUE(answered[1]);
}

// A peer that does not know the run's token (as a stranger in a rank's place) is found out on both sides.
TEST(GlooCheck, APeerWithoutTheTokenIsFoundOut) {
  bool answered[2] = {true, true};
  std::string whys[2];
  onGlooPair([&](int rank, c10d::ProcessGroupGloo& group) {
    answered[rank] =
        glooGroupAnswers(group, rank, 2, rank == 0 ? "run-token" : "guess", 1, milliseconds(5000), &whys[rank]);
  });
  EXPECT_FALSE(answered[0]);
  EXPECT_FALSE(answered[1]);
  EXPECT_EQ(whys[0], "the connection to rank 1 answered the group's check wrongly");
  EXPECT_EQ(whys[1], "the connection to rank 0 answered the group's check wrongly");
}

// A silent peer (a stranger that took a listener says nothing) is found after the check's wait, not the group's
// 30 s timeout.
TEST(GlooCheck, ASilentPeerIsFoundAfterTheWait) {
  bool answered = true;
  std::string why;
  double seconds = 0;
  std::promise<void> checked;
  auto done = checked.get_future();
  onGlooPair([&](int rank, c10d::ProcessGroupGloo& group) {
    if (rank == 1) {  // keeps its connection open and says nothing
      done.wait();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    answered = glooGroupAnswers(group, 0, 2, "run-token", 2, milliseconds(300), &why);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    checked.set_value();
  });
  EXPECT_FALSE(answered);
  EXPECT_EQ(why, "rank 1 did not answer the group's check within 300 ms");
  EXPECT_GE(seconds, 0.25) << "it did not wait for the peer";
  EXPECT_LT(seconds, 10.0) << "waited for the group's timeout, not the check's";
}

// The real thing: another process's connection reaches rank 0's Gloo listener before rank 1 has even started. Which
// side of a pair listens depends on the two ports. Where rank 0 connects instead, its listener closes, the stranger is
// left out and the group must answer. Where rank 0 listens, it forms around the stranger (and rank 1, whose
// connection finds the listener closed, does not form, or, when both connections come before the accept, believes it
// formed too): rank 0's check must find the stranger, and no rank may answer alone. Repeated until the stranger has
// taken a place a few times.
TEST(GlooCheck, AGroupFormedAroundAStrangerIsFoundOut) {
  int taken = 0, rounds = 0;
  for (; rounds < 60 && taken < 3; ++rounds) {
    auto store = c10::make_intrusive<c10d::HashStore>();
    std::set<int> before;
    for (const auto& l : listenersOf({::getpid()})) before.insert(l.port);
    bool formed[2] = {false, false}, answered[2] = {false, false};
    std::string whys[2];
    auto rank = [&](int r) {
      auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(5));
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      options->threads = 1;
      try {
        auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, r, 2, options);
        formed[r] = true;
        answered[r] = glooGroupAnswers(*group, r, 2, "run-token", 1, milliseconds(500), &whys[r]);
      } catch (const std::exception& e) {
        whys[r] = e.what();
      }
    };
    std::thread first(rank, 0);
    int stranger = -1;
    for (int i = 0; i < 5000 && stranger < 0; ++i) {  // rank 0's listener, as soon as it is there
      for (const auto& l : listenersOf({::getpid()}))
        if (!l.ipv6 && !before.count(l.port)) stranger = connectToLoopback(l.port);
      if (stranger < 0) std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_GE(stranger, 0) << "rank 0 never listened";
    std::thread second(rank, 1);
    first.join();
    second.join();
    ::close(stranger);
    ASSERT_TRUE(formed[0]) << whys[0];
    EXPECT_EQ(answered[0], answered[1]) << whys[0] << " / " << whys[1];
    if (answered[0]) continue;
    ++taken;
    EXPECT_EQ(whys[0], "rank 1 did not answer the group's check within 500 ms");
  }
  EXPECT_EQ(taken, 3) << "the stranger never took rank 1's place in " << rounds << " rounds";
}

}  // namespace
}  // namespace ps
