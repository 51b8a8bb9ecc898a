// The rendezvous store: what the process groups need from it, where it listens, whom it answers, and what it does
// with bytes that do not follow its protocol.
#include "engine/dist/KeyValueStore.h"
#include "engine/dist/RendezvousStore.h"
#include "tests/ListeningSockets.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace ps {
namespace {

using namespace std::chrono_literals;
using store::Op;

std::vector<uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

// A raw connection to the server, for sending what a well-behaved client never would.
struct RawSocket {
  int fd = -1;
  explicit RawSocket(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(port));
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval t{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  }
  ~RawSocket() { ::close(fd); }
  void send(Op op, uint32_t keyBytes, uint32_t valueBytes, const std::string& rest = "") {
    std::vector<uint8_t> out(9);
    out[0] = uint8_t(op);
    for (int i = 0; i < 4; ++i) {
      out[size_t(1 + i)] = uint8_t(keyBytes >> (8 * i));
      out[size_t(5 + i)] = uint8_t(valueBytes >> (8 * i));
    }
    out.insert(out.end(), rest.begin(), rest.end());
    ASSERT_EQ(::send(fd, out.data(), out.size(), MSG_NOSIGNAL), ssize_t(out.size()));
  }
  // True when the server closed the connection (recv returns 0 once what it sent, if anything, is read).
  bool closedByServer() {
    uint8_t buf[64];
    for (;;) {
      const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
      if (r == 0) return true;
      if (r < 0) return false;  // timed out: still open
    }
  }
};

TEST(KeyValueStore, ServesWhatTheProcessGroupsAndTheClusterUse) {
  KeyValueServer server("127.0.0.1", 0, "secret");
  KeyValueClient c("127.0.0.1", server.port(), "secret", 2000ms);
  EXPECT_FALSE(c.get("a").has_value());
  c.set("a", bytes("one"));
  EXPECT_EQ(*c.get("a"), bytes("one"));
  c.set("a", bytes(""));
  EXPECT_EQ(*c.get("a"), bytes(""));
  EXPECT_TRUE(c.check("a"));
  EXPECT_EQ(c.add("beat/0", 1), 1);
  EXPECT_EQ(c.add("beat/0", 5), 6);
  EXPECT_EQ(*c.get("beat/0"), bytes("6")) << "counters read as decimal text, as in c10d";
  EXPECT_EQ(c.numKeys(), 2);
  EXPECT_TRUE(c.erase("a"));
  EXPECT_FALSE(c.erase("a"));
  EXPECT_FALSE(c.check("a"));
  EXPECT_EQ(c.compareSet("cas", {}, bytes("x")), bytes("x")) << "a missing key with an empty expectation is set";
  EXPECT_EQ(c.compareSet("cas", bytes("y"), bytes("z")), bytes("x")) << "a wrong expectation changes nothing";
  EXPECT_EQ(c.compareSet("cas", bytes("x"), bytes("z")), bytes("z"));
  try {
    c.add("cas", 1);
    ADD_FAILURE() << "a text value was counted";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("not a counter"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*c.get("cas"), bytes("z")) << "a refused request leaves the connection usable";
  c.set("max", bytes(std::to_string(INT64_MAX)));
  EXPECT_THROW(c.add("max", 1), RendezvousError) << "counters refuse to overflow";
}

TEST(KeyValueStore, ListensOnTheAddressItIsGivenOnly) {
  KeyValueServer server("127.0.0.1", 0, "");
  const auto mine = test::listenersOf({::getpid()});
  bool found = false;
  for (const auto& l : mine)
    if (l.port == server.port()) {
      found = true;
      EXPECT_TRUE(l.loopback()) << "the store listens on " << l.text();
    }
  EXPECT_TRUE(found) << "the store's listening socket is not in /proc/net/tcp";
  try {
    KeyValueServer elsewhere("192.0.2.1", 0, "");  // TEST-NET-1: never an address of this machine
    ADD_FAILURE() << "bound an address this machine does not have";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR"), std::string::npos) << e.what();
  }
}

TEST(KeyValueStore, AnswersOnlyConnectionsThatPresentTheToken) {
  KeyValueServer server("127.0.0.1", 0, "right");
  try {
    KeyValueClient wrong("127.0.0.1", server.port(), "wrong", 2000ms);
    ADD_FAILURE() << "a wrong token was accepted";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("PIPESQUEEZE_STORE_TOKEN"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KeyValueClient("127.0.0.1", server.port(), "", 2000ms), RendezvousError);
  RawSocket raw(server.port());
  raw.send(Op::Set, 1, 1, "kv");  // a write before the greeting
  EXPECT_TRUE(raw.closedByServer());
  KeyValueClient right("127.0.0.1", server.port(), "right", 2000ms);
  EXPECT_FALSE(right.check("k")) << "the ungreeted write did not land";
}

TEST(KeyValueStore, ClosesConnectionsThatBreakTheProtocolBeforeAllocating) {
  KeyValueServer server("127.0.0.1", 0, "");
  KeyValueClient honest("127.0.0.1", server.port(), "", 2000ms);
  honest.set("kept", bytes("yes"));
  struct Case {
    const char* what;
    Op op;
    uint32_t key, value;
  };
  for (const Case& k : {Case{"a 4 GiB value", Op::Set, 1, 0xFFFFFFFFu}, Case{"a 4 GiB key", Op::Get, 0xFFFFFFFFu, 0},
                        Case{"an unknown operation", Op(0x7F), 1, 0}, Case{"a get with a value", Op::Get, 1, 4},
                        Case{"an increment of 3 bytes", Op::Add, 1, 3}, Case{"a keyless set", Op::Set, 0, 1}}) {
    RawSocket raw(server.port());
    raw.send(Op::Hello, 0, 0);
    uint8_t ok[5];
    ASSERT_EQ(::recv(raw.fd, ok, 5, MSG_WAITALL), 5) << "greeting";
    raw.send(k.op, k.key, k.value);
    EXPECT_TRUE(raw.closedByServer()) << k.what;
  }
  EXPECT_EQ(*honest.get("kept"), bytes("yes")) << "other connections keep working";
  EXPECT_THROW(honest.set("big", std::vector<uint8_t>(store::kMaxValueBytes + 1)), RendezvousError)
      << "the client refuses what the server would";
}

TEST(KeyValueStore, RefusesConnectionsBeyondItsLimit) {
  KeyValueServer server("127.0.0.1", 0, "", 2);
  KeyValueClient a("127.0.0.1", server.port(), "", 2000ms);
  KeyValueClient b("127.0.0.1", server.port(), "", 2000ms);
  EXPECT_THROW(KeyValueClient("127.0.0.1", server.port(), "", 2000ms), RendezvousError);
  a.set("k", bytes("v"));
  EXPECT_EQ(*b.get("k"), bytes("v"));
}

TEST(KeyValueStore, ParsesRequestHeadersStrictly) {
  uint8_t h[9] = {uint8_t(Op::Set), 3, 0, 0, 0, 5, 0, 0, 0};
  const auto ok = store::parseRequestHeader(h, 9);
  EXPECT_EQ(ok.op, Op::Set);
  EXPECT_EQ(ok.keyBytes, 3u);
  EXPECT_EQ(ok.valueBytes, 5u);
  EXPECT_THROW(store::parseRequestHeader(h, 8), RendezvousError);
  h[0] = 0;
  EXPECT_THROW(store::parseRequestHeader(h, 9), RendezvousError);
  h[0] = uint8_t(Op::NumKeys);
  EXPECT_THROW(store::parseRequestHeader(h, 9), RendezvousError) << "NumKeys takes no key";
  h[0] = uint8_t(Op::Hello);
  h[1] = 0;
  h[5] = 0;
  h[6] = 2;  // a 512-byte token
  EXPECT_THROW(store::parseRequestHeader(h, 9), RendezvousError);
}

TEST(RendezvousStore, WaitsForKeysAndTimesOutNamingThem) {
  KeyValueServer server("127.0.0.1", 0, "t");
  auto s = c10::make_intrusive<RendezvousStore>("127.0.0.1", server.port(), "t", 3000ms);
  auto other = c10::static_intrusive_pointer_cast<RendezvousStore>(s->clone());
  std::thread late([&] {
    std::this_thread::sleep_for(100ms);
    other->set("late", bytes("here"));
  });
  EXPECT_EQ(s->get("late"), bytes("here")) << "get waits for the key";
  late.join();
  EXPECT_TRUE(s->check({"late"}));
  EXPECT_FALSE(s->check({"late", "missing"}));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    s->wait({"missing"}, 200ms);
    ADD_FAILURE() << "waited past the timeout";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

}  // namespace
}  // namespace ps
