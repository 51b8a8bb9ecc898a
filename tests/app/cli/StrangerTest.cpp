// Connections from outside a run to the ports a starting multi-process run listens on: silent ones and ones that
// send garbage. Each must be ignored (and logged) while the ranks keep waiting for each other; the run finishes.
#include "tests/ListeningSockets.h"
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace ps::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Connects to every port the processes listen on, once each, as soon as it appears, and holds the connections open
// until destroyed; `garbage` sends 64 bytes of nonsense first. Counts the connections made.
class Stranger {
 public:
  Stranger(pid_t launcher, bool garbage) : thread_([this, launcher, garbage] { prowl(launcher, garbage); }) {}
  ~Stranger() {
    done_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
  }
  int connections() const { return connections_; }

 private:
  void prowl(pid_t launcher, bool garbage) {
    std::set<int> tried;
    while (!done_) {
      std::vector<pid_t> pids = childrenOf(launcher);
      pids.push_back(launcher);
      for (const auto& l : listenersOf(pids)) {
        if (l.ipv6 || !tried.insert(l.port).second) continue;
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(uint16_t(l.port));
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
          ::close(fd);
          continue;
        }
        ++connections_;
        if (garbage) {
          char junk[64];
          for (size_t i = 0; i < sizeof junk; ++i) junk[i] = char(i * 37 + 11);
          (void)!::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
        }
        fds_.push_back(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::atomic<bool> done_{false};
  std::atomic<int> connections_{0};
  std::vector<int> fds_;
  std::thread thread_;
};

void runWithAStranger(bool garbage, const std::vector<std::string>& sets) {
  const auto store = freshStoreIn("pipesqueeze-stranger", garbage ? "garbage" : "silent");
  std::vector<std::string> args{"launch",
                                "--preset",
                                std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json",
                                "--store",
                                store,
                                "--json",
                                "--set",
                                "train.max_steps=10",
                                "--set",
                                "eval.every_steps=10",
                                "--set",
                                "parallel.timeout_s=60"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  CliProcess launcher(args);
  CliResult r;
  int connections = 0;
  {
    Stranger stranger(launcher.pid(), garbage);
    r = launcher.wait();
    connections = stranger.connections();
  }
  EXPECT_GT(connections, 0) << "the stranger found nothing to connect to";
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(json::parse(r.lastLine())["status"], "finished") << r.out;
  EXPECT_NE(r.err.find("ignored a connection"), std::string::npos) << "strangers are logged:\n" << r.err;
}

TEST(Stranger, SilentConnectionsToAStartingRunAreIgnored) {
  runWithAStranger(false, {});
}

TEST(Stranger, GarbageConnectionsToAStartingRunAreIgnored) {
  runWithAStranger(true, {});
}

// Two replicas per stage: gradients cross between them every step.
TEST(Stranger, ConnectionsToAReplicatedRunAreIgnored) {
  runWithAStranger(false, {"parallel.replicas=2"});
}

// Pipeline links through Gloo rather than the run's own streams: Gloo's listeners take the first connection, so a
// group is checked before use and formed again where a stranger took a rank's place (engine/dist/GlooCheck.h).
TEST(Stranger, ConnectionsToAGlooLinkedRunAreIgnored) {
  runWithAStranger(true, {"parallel.transport=gloo"});
}

}  // namespace
}  // namespace ps::test
