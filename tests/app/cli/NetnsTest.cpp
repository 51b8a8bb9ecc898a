// Test hosts in network namespaces (tools/netns-hosts.sh): a pipeline whose stages run on two hosts joined by a
// shaped link trains exactly as in one process, a shaped latency is a real round trip between the hosts, and the
// hosts, their links, their ranks and the delay line are always removed, also when a rank dies or the script is
// stopped. Skipped, saying why, where namespaces cannot be made (not root, no CAP_NET_ADMIN, no iproute2).
#include "engine/runs/store/RunStore.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ps::test {
namespace {

namespace fs = std::filesystem;

// The delay line this build made, for kernels without sch_netem.
const std::string kScript = "PIPESQUEEZE_NETDELAY=" + std::string(PIPESQUEEZE_NETDELAY) + " " +
                            std::string(PIPESQUEEZE_SOURCE_DIR) + "/tools/netns-hosts.sh";
const std::string kCli = PIPESQUEEZE_CLI;
const std::string kSmoke = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

struct Shell {
  int status = -1;
  std::string out;
};

Shell shell(const std::string& command) {
  Shell r;
  FILE* p = ::popen(("(" + command + ") 2>&1").c_str(), "r");  // every part of a chain, not only its last
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int w = ::pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
  return r;
}

// Why namespaces cannot be made here, or "" when they can.
std::string whyNoNamespaces() {
  if (::geteuid() != 0) return "network namespaces need root (CAP_NET_ADMIN); this test runs as a normal user";
  if (shell("command -v ip && command -v tc").status != 0) return "iproute2 (ip, tc) is not installed";
  const std::string probe = "psprobe" + std::to_string(::getpid() % 100000);
  const auto made = shell("ip netns add " + probe + " && ip netns del " + probe);
  if (made.status != 0) return "cannot create a network namespace here: " + made.out;
  return "";
}

std::string freshStore(const std::string& name) {
  auto path = (fs::temp_directory_path() / ("pipesqueeze-netns-" + std::to_string(::getpid()) + "-" + name + ".sqlite"))
                  .string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  return path;
}

std::string prefixFor(const std::string& what) {
  return what + std::to_string(::getpid() % 100000);
}

std::vector<double> series(const std::string& store, const std::string& key) {
  RunStore s(store);
  std::vector<double> out;
  const auto runs = s.listRuns();
  if (runs.empty()) return out;
  for (const auto& m : s.metrics(runs.front().id, key))
    if (m.key == key) out.push_back(m.value);
  return out;
}

// What a prefix left behind: its namespaces, veth links in this namespace, processes naming `marker` (a delay line
// names its prefix in its ready file) and the delay line's folder.
std::string leftovers(const std::string& prefix, const std::string& marker) {
  std::string found;
  const auto ns = shell("ip netns list | awk '{print $1}' | grep -E '^" + prefix + "-' || true");
  if (!ns.out.empty()) found += "namespaces: " + ns.out;
  const auto links = shell("ip -o link show type veth | grep -E ' h[0-9]+@' || true");
  if (!links.out.empty()) found += "veth links here: " + links.out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(::getpid())) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    if (cmd.find(marker) != std::string::npos || cmd.find("netns-hosts-" + prefix + ".") != std::string::npos)
      found += "process " + pid + "\n";
  }
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path()))  // the delay line's folder
    if (entry.path().filename().string().rfind("netns-hosts-" + prefix + ".", 0) == 0)
      found += "folder " + entry.path().string() + "\n";
  return found;
}

// In a child process inside host `h`'s namespace: `body` returns what the child reports to the parent. (The test
// process has one thread, so the child may allocate.)
template <class Body>
pid_t inHost(const std::string& prefix, int h, int reportFd, Body body) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::string report;
  const int ns = ::open(("/run/netns/" + prefix + "-h" + std::to_string(h)).c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0)
    report = "error: cannot enter host " + std::to_string(h);
  else
    report = body();
  (void)!::write(reportFd, report.data(), report.size());
  ::_exit(0);
}

std::string readAll(int fd) {
  std::string out;
  std::array<char, 4096> buf{};
  for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) out.append(buf.data(), size_t(n));
  return out;
}

// `count` one-byte round trips over TCP from host 1 to host 0, in milliseconds each, measured by host 1; or the
// reason there are none (a connection that does not come up within a second, say).
struct RoundTrips {
  std::vector<double> ms;
  std::string error;
};

RoundTrips roundTrips(const std::string& prefix, int count) {
  int ready[2], result[2];
  if (::pipe(ready) != 0) return {{}, "no pipe"};
  const pid_t server = inHost(prefix, 0, ready[1], [&] {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0), one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(29599);
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 1) != 0) return std::string("error");
    (void)!::write(ready[1], "r", 1);
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return std::string();
    const int c = ::accept(s, nullptr, nullptr);
    ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char b = 0;
    while (::read(c, &b, 1) == 1 && ::write(c, &b, 1) == 1) {
    }
    return std::string();
  });
  ::close(ready[1]);
  char r = 0;
  if (::read(ready[0], &r, 1) != 1 || r != 'r') {
    ::waitpid(server, nullptr, 0);
    return {{}, "the server in host 0 did not start"};
  }
  if (::pipe(result) != 0) {  // made after the server's fork: its end closes with the client
    ::kill(server, SIGKILL);
    ::waitpid(server, nullptr, 0);
    return {{}, "no pipe"};
  }
  const pid_t client = inHost(prefix, 1, result[1], [&] {
    const int c = ::socket(AF_INET, SOCK_STREAM, 0), one = 1;
    ::fcntl(c, F_SETFL, O_NONBLOCK);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(29599);
    ::inet_pton(AF_INET, "10.231.0.1", &a.sin_addr);
    ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
    pollfd p{c, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, 1000) != 1 || ::getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
      return std::string("error: no connection within a second");
    ::fcntl(c, F_SETFL, 0);
    ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string out;
    for (int i = 0; i < count; ++i) {
      const auto t = std::chrono::steady_clock::now();
      char b = 'x';
      if (::write(c, &b, 1) != 1 || ::read(c, &b, 1) != 1) return std::string("error: the echo stopped");
      out += std::to_string(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count()) +
             "\n";
    }
    return out;
  });
  ::close(result[1]);
  const std::string text = readAll(result[0]);
  ::close(result[0]);
  ::close(ready[0]);
  ::waitpid(client, nullptr, 0);
  ::kill(server, SIGKILL);
  ::waitpid(server, nullptr, 0);
  RoundTrips out;
  if (text.rfind("error", 0) == 0) {
    out.error = text;
    return out;
  }
  std::stringstream in(text);
  for (double v; in >> v;) out.ms.push_back(v);
  return out;
}

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string trainArgs(const std::string& store, const std::string& extra = "") {
  return kCli + " train --preset " + kSmoke + " --store " + store +
         " --json --set train.max_steps=30 --set eval.every_steps=10 " + extra;
}

TEST(Namespaces, ATwoHostPipelineOverAShapedLinkTrainsAsOneProcessDoes) {
  if (const auto why = whyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  const auto inProcess = freshStore("threads");
  ASSERT_EQ(shell(trainArgs(inProcess)).status, 0);
  const auto hosts = freshStore("hosts");
  const auto prefix = prefixFor("tp");
  // 1 ms each way: netem where the kernel has it, the delay line elsewhere.
  const auto r =
      shell(kScript + " run --hosts 2 --bandwidth 100 --latency 1 --prefix " + prefix + " -- " + trainArgs(hosts));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* key : {"train/loss", "eval/loss"}) {
    const auto a = series(hosts, key), b = series(inProcess, key);
    ASSERT_EQ(a.size(), b.size()) << key;
    ASSERT_FALSE(a.empty()) << key;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1e-3, std::abs(b[i]))) << key << i;
  }
  EXPECT_EQ(leftovers(prefix, hosts), "");
}

TEST(Namespaces, AKilledRankOrAStoppedScriptLeavesNoHostNoLinkNoProcess) {
  if (const auto why = whyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  const auto prefix = prefixFor("tk");
  const auto killed = freshStore("killed");
  const auto r = shell("PIPESQUEEZE_FAULT=1:10:kill " + kScript + " run --hosts 2 --bandwidth 100 --prefix " + prefix +
                       " -- " + trainArgs(killed, "--set parallel.timeout_s=5"));
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(leftovers(prefix, killed), "");
  RunStore s(killed);
  ASSERT_EQ(s.listRuns().size(), 1u);
  EXPECT_EQ(s.listRuns()[0].status, "failed");

  // Stopped from outside while both ranks train (a long run; TERM once rank 0 has created its run): the trap
  // removes everything and the script says it was terminated.
  const auto stopped = freshStore("stopped");
  const auto t = shell(kScript + " run --hosts 2 --bandwidth 100 --prefix " + prefix + " -- " +
                       trainArgs(stopped, "--set train.max_steps=1000000") + " & p=$!; for i in $(seq 300); do " +
                       "[ -s " + stopped + " ] && break; sleep 0.1; done; sleep 1; kill -TERM $p; wait $p");
  EXPECT_EQ(t.status, 143) << t.out;
  EXPECT_EQ(leftovers(prefix, stopped), "");
}

TEST(Namespaces, ALatencyIsARealRoundTripAndALossOfAllPacketsCutsTheHostsOff) {
  if (const auto why = whyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  const auto prefix = prefixFor("tl");
  const auto up = [&](const std::string& shaping) {
    const auto r = shell(kScript + " up --hosts 2 --prefix " + prefix + " " + shaping);
    if (r.status != 0 && r.out.find("apt-get install iptables") != std::string::npos) return r.out;
    EXPECT_EQ(r.status, 0) << r.out;
    return std::string();
  };
  if (const auto why = up("--latency 0"); !why.empty()) GTEST_SKIP() << why;
  const auto bare = roundTrips(prefix, 30);
  ASSERT_EQ(bare.error, "");
  if (const auto why = up("--latency 2 --bandwidth 100"); !why.empty()) GTEST_SKIP() << why;
  const auto shaped = roundTrips(prefix, 30);
  ASSERT_EQ(shaped.error, "");
  ASSERT_EQ(shaped.ms.size(), 30u);
  // Every packet is held 2 ms on its way, so no round trip is shorter than 4 ms, and the unshaped hosts had none
  // that long; beyond the 4 ms is the machine's own time (generous bounds: CI machines are busy).
  EXPECT_GE(*std::min_element(shaped.ms.begin(), shaped.ms.end()), 4.0);
  EXPECT_LT(*std::min_element(bare.ms.begin(), bare.ms.end()), 4.0);
  EXPECT_LT(medianOf(shaped.ms), 4.0 + medianOf(bare.ms) + 4.0) << "unshaped median " << medianOf(bare.ms) << " ms";
  ASSERT_EQ(up("--loss 100"), "");
  EXPECT_NE(roundTrips(prefix, 1).error, "");
  EXPECT_EQ(shell(kScript + " down --prefix " + prefix).status, 0);
  EXPECT_EQ(leftovers(prefix, "no-run-store-here"), "");
}

TEST(Namespaces, BadRequestsAreRefusedNamingThem) {
  const auto r = shell(kScript + " up --hosts two");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--hosts must be 1 to 200, not 'two'"), std::string::npos) << r.out;
  const auto b = shell(kScript + " up --hosts 2 --bandwidth fast");
  EXPECT_NE(b.out.find("--bandwidth must be a number, not 'fast'"), std::string::npos) << b.out;
  const auto c = shell(kScript + " run --hosts 2 --prefix x");
  EXPECT_NE(c.out.find("run needs a command after --"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace ps::test
