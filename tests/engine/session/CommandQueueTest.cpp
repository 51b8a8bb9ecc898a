// The command queue a running session takes a turn of at every step.
#include "engine/session/CommandQueue.h"

#include <gtest/gtest.h>

#include <thread>

namespace ps {
namespace {

TEST(CommandQueue, ATurnTakesEverythingPostedInOrderAndKeepsThePauseState) {
  CommandQueue q;
  q.push(Command::set("train.lr", 0.1));
  q.push(Command::pause());
  q.push(Command::set("link.latency_ms", 2));
  q.push(Command::pause());  // already paused: no second transition
  auto t = q.take();
  ASSERT_EQ(t.sets.size(), 2u);
  EXPECT_EQ(t.sets[0].key, "train.lr");
  EXPECT_EQ(t.sets[1].key, "link.latency_ms");
  EXPECT_TRUE(t.paused);
  EXPECT_FALSE(t.stop);
  EXPECT_EQ(t.transitions, std::vector<Command::Kind>{Command::Kind::Pause});
  t = q.take();  // nothing new: still paused, nothing to announce
  EXPECT_TRUE(t.paused && t.sets.empty() && t.transitions.empty());
  q.push(Command::resume());
  q.push(Command::pause());
  q.push(Command::resume());
  t = q.take();
  EXPECT_FALSE(t.paused);
  EXPECT_EQ(t.transitions.size(), 3u);  // every change is announced, even within one step
}

TEST(CommandQueue, StopComesFromACommandTheSignalPathOrAnOwnersFlag) {
  CommandQueue a;
  a.push(Command::stop());
  EXPECT_TRUE(a.take().stop);
  CommandQueue b;
  b.requestStop();
  EXPECT_TRUE(b.take().stop);
  std::atomic<bool> flag{false};
  CommandQueue c;
  c.stopWhen(&flag);
  EXPECT_FALSE(c.take().stop);
  flag = true;
  EXPECT_TRUE(c.take().stop);
  CommandQueue d;
  d.follow(false, true);  // what rank 0 decided
  EXPECT_TRUE(d.paused());
  d.follow(true, false);
  EXPECT_TRUE(d.stopRequested());
}

TEST(CommandQueue, PostingFromOtherThreadsLosesNothing) {
  CommandQueue q;
  std::vector<std::thread> posters;
  for (int t = 0; t < 4; ++t)
    posters.emplace_back([&q, t] {
      for (int i = 0; i < 500; ++i) q.push(Command::set("train.lr", t * 1000 + i));
    });
  size_t taken = 0;
  while (taken < 2000) taken += q.take().sets.size();
  for (auto& p : posters) p.join();
  EXPECT_EQ(taken + q.take().sets.size(), 2000u);
}

}  // namespace
}  // namespace ps
