// A link direction over a TCP stream of its own: payloads leave as soon as they are sent (before the receiver asks),
// cross in order with their clock stamps, and the receiving end treats everything that reaches its port as
// untrusted: strangers are closed unread, oversized or foreign headers and silent or vanished peers are errors naming
// the peer.
#include "engine/dist/Cluster.h"
#include "engine/dist/Framing.h"
#include "engine/dist/LinkStream.h"
#include "engine/dist/Sockets.h"
#include "tests/ListeningSockets.h"
#include "tests/engine/dist/ShareBoard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace ps {
namespace {

LinkStream::Peer peer(const std::string& self, const std::string& other, double timeout = 10) {
  return {self, other, "token-1", timeout};
}

std::vector<uint8_t> bytesOf(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 31);
  return v;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "";
}

// A raw connection to a receiving end's port, introducing itself with `key` and `token`.
int rawConnect(int port, const std::string& key, const std::string& token) {
  const int fd = test::connectToLoopback(port);
  EXPECT_GE(fd, 0);
  std::vector<uint8_t> hello(16);
  const uint64_t magic = 0x314b4e494c535050;
  const uint32_t keyBytes = uint32_t(key.size()), tokenBytes = uint32_t(token.size());
  std::memcpy(hello.data(), &magic, 8);
  std::memcpy(hello.data() + 8, &keyBytes, 4);
  std::memcpy(hello.data() + 12, &tokenBytes, 4);
  hello.insert(hello.end(), key.begin(), key.end());
  hello.insert(hello.end(), token.begin(), token.end());
  EXPECT_EQ(::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL), ssize_t(hello.size()));
  return fd;
}

TEST(LinkStream, PayloadsLeaveBeforeTheReceiverAsksAndArriveInOrderWithTheirStamps) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "stream/fwd0", peer("rank 1", "rank 0"), board.share());
  auto out = LinkStream::sending("127.0.0.1", "stream/fwd0", peer("rank 0", "rank 1"), board.share());
  const std::vector<size_t> sizes{0, 1, 1000, 3 * 65536 + 7};
  for (size_t i = 0; i < sizes.size(); ++i) out->send(bytesOf(sizes[i], uint8_t(i)), 0.5 * double(i), int64_t(i));
  // Nobody has asked for a message yet: the bytes are already with the kernel (Gloo would still hold them back,
  // waiting for the receiver to post a receive), so the flush returns.
  auto flushed = std::async(std::launch::async, [&] { out->flush(); });
  ASSERT_EQ(flushed.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  flushed.get();
  for (size_t i = 0; i < sizes.size(); ++i) {
    double stamp = -1;
    int64_t deliver = -1;
    EXPECT_EQ(in->receive(1 << 20, &stamp, &deliver), bytesOf(sizes[i], uint8_t(i))) << i;
    EXPECT_EQ(stamp, 0.5 * double(i));
    EXPECT_EQ(deliver, int64_t(i));
  }
}

TEST(LinkStream, ABodyLargerThanAChunkCrossesWhole) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "k", peer("b", "a"), board.share());
  auto out = LinkStream::sending("127.0.0.1", "k", peer("a", "b"), board.share());
  const auto big = bytesOf(kChunkBytes + kChunkBytes / 2 + 3, 9);
  out->send(big, 1, 0);
  EXPECT_EQ(in->receive(Cluster::kMaxMessageBytes, nullptr, nullptr), big);
  out->flush();
}

TEST(LinkStream, StrangersAreClosedUnreadAndTheLinksOwnSenderStillGetsThrough) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "stream/bwd1", peer("rank 1", "rank 2"), board.share());
  const int wrongToken = rawConnect(in->port(), "stream/bwd1", "token-2");
  const int wrongKey = rawConnect(in->port(), "stream/fwd1", "token-1");
  const int nameless = rawConnect(in->port(), "", "");
  // One that connects and says nothing holds the port for at most a few seconds.
  const int mute = test::connectToLoopback(in->port());
  ASSERT_GE(mute, 0);
  auto out = LinkStream::sending("127.0.0.1", "stream/bwd1", peer("rank 2", "rank 1"), board.share());
  out->send(bytesOf(10, 3), 2, 0);
  EXPECT_EQ(in->receive(100, nullptr, nullptr), bytesOf(10, 3));
  for (int fd : {wrongToken, wrongKey, nameless, mute}) {  // closed by the receiving end: a read sees the end
    uint8_t b = 0;
    net::waitFor(fd, POLLIN, net::Clock::now() + std::chrono::seconds(2));
    EXPECT_LE(::recv(fd, &b, 1, MSG_DONTWAIT), 0);
    ::close(fd);
  }
}

// Connections that say nothing are watched together, not one after another: ten of them ahead of the sender, each
// allowed a few seconds to introduce itself, do not make the sender miss a 4 s timeout.
TEST(LinkStream, SilentStrangersDoNotHoldUpTheSenderBehindThem) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "stream/fwd0", peer("rank 1", "rank 0", 4), board.share());
  std::vector<int> mutes;
  for (int i = 0; i < 10; ++i) {
    const int fd = test::connectToLoopback(in->port());
    ASSERT_GE(fd, 0);
    mutes.push_back(fd);
  }
  auto received = std::async(std::launch::async, [&] { return in->receive(100, nullptr, nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the receiving end is watching the ten by now
  auto out = LinkStream::sending("127.0.0.1", "stream/fwd0", peer("rank 0", "rank 1", 4), board.share());
  out->send(bytesOf(12, 5), 1, 0);
  EXPECT_EQ(received.get(), bytesOf(12, 5));
  for (int fd : mutes) ::close(fd);
}

TEST(LinkStream, OversizedOrForeignHeadersAreRefusedNamingThePeer) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "k", peer("rank 1 (stage 1, replica 0)", "rank 0 (stage 0, replica 0)"),
                                  board.share());
  const int fd = rawConnect(in->port(), "k", "token-1");
  WireHeader h;
  h.bytes = 1001;
  ASSERT_EQ(::send(fd, &h, sizeof h, MSG_NOSIGNAL), ssize_t(sizeof h));
  const auto big = errorOf([&] { in->receive(1000, nullptr, nullptr); });
  EXPECT_NE(big.find("rank 0 (stage 0, replica 0) sent"), std::string::npos) << big;

  auto in2 = LinkStream::receiving("127.0.0.1", "k2", peer("b", "a"), board.share());
  const int fd2 = rawConnect(in2->port(), "k2", "token-1");
  const char junk[32] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd2, junk, sizeof junk, MSG_NOSIGNAL), ssize_t(sizeof junk));
  EXPECT_NE(errorOf([&] { in2->receive(1000, nullptr, nullptr); }).find("a sent"), std::string::npos);
  ::close(fd);
  ::close(fd2);
}

TEST(LinkStream, ASilentOrVanishedPeerIsAnErrorNamingIt) {
  Board board;
  auto in = LinkStream::receiving("127.0.0.1", "k", peer("rank 1", "rank 0", 0.3), board.share());
  auto out = LinkStream::sending("127.0.0.1", "k", peer("rank 0", "rank 1", 0.3), board.share());
  const auto silent = errorOf([&] { in->receive(100, nullptr, nullptr); });
  EXPECT_NE(silent.find("rank 0 sent nothing for"), std::string::npos) << silent;
  out.reset();  // the sender's process ends
  const auto gone = errorOf([&] { in->receive(100, nullptr, nullptr); });
  EXPECT_NE(gone.find("rank 0 closed its connection"), std::string::npos) << gone;

  // The other way round: the receiver is gone, so a send fails at the latest when the step's sends are flushed.
  auto in2 = LinkStream::receiving("127.0.0.1", "k2", peer("rank 1", "rank 0", 2), board.share());
  auto out2 = LinkStream::sending("127.0.0.1", "k2", peer("rank 0", "rank 1", 2), board.share());
  out2->send(bytesOf(10, 1), 0, 0);
  EXPECT_EQ(in2->receive(100, nullptr, nullptr), bytesOf(10, 1));
  in2.reset();
  std::string failed;
  for (int i = 0; i < 200 && failed.empty(); ++i)
    failed = errorOf([&] {
      out2->send(bytesOf(1 << 16, 2), 0, 0);
      out2->flush();
    });
  EXPECT_NE(failed.find("sending failed: rank 1 closed its connection"), std::string::npos) << failed;
}

TEST(LinkStream, AMalformedPublishedAddressIsRefused) {
  Board board;
  for (const std::string bad : {"", "host-without-port", "127.0.0.1\n0", "127.0.0.1\n70000", "127.0.0.1\n12ab"}) {
    board.values["k"] = std::vector<uint8_t>(bad.begin(), bad.end());
    const auto e = errorOf([&] { LinkStream::sending("127.0.0.1", "k", peer("rank 0", "rank 1"), board.share()); });
    EXPECT_NE(e.find("the address rank 1 published for its link is malformed"), std::string::npos) << bad << ": " << e;
  }
}

}  // namespace
}  // namespace ps
