// Test hosts in network namespaces (tools/netns-hosts.sh): a pipeline whose stages run on two hosts joined by a
// shaped link trains exactly as in one process, and the hosts, their links and their ranks are always removed, also
// when a rank dies or the script is stopped. Skipped, saying why, where namespaces cannot be made (not root, no
// CAP_NET_ADMIN, no iproute2).
#include "engine/runs/store/RunStore.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ps::test {
namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(PIPESQUEEZE_SOURCE_DIR) + "/tools/netns-hosts.sh";
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

// What a prefix left behind: its namespaces, veth links in this namespace, and processes naming `marker`.
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
    if (cmd.find(marker) != std::string::npos) found += "process " + pid + "\n";
  }
  return found;
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
  const auto r = shell(kScript + " run --hosts 2 --bandwidth 100 --prefix " + prefix + " -- " + trainArgs(hosts));
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
