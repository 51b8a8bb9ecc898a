// Where ranks listen and meet on a cluster: --bind as an address or an interface, refused when it is not this
// machine's; the address chosen when none is named; Slurm's task layout and node lists.
#include "engine/dist/Cluster.h"
#include "engine/dist/HostNetwork.h"
#include "engine/errors/ConfigError.h"
#include "tests/ScopedEnv.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

using test::ScopedEnv;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(HostNetwork, BindTakesAnAddressOrAnInterfaceOfThisMachineAndRefusesAnyOther) {
  EXPECT_EQ(bindAddress("127.0.0.1", "--bind", "10.0.0.1"), "127.0.0.1");
  EXPECT_EQ(bindAddress("lo", "GLOO_SOCKET_IFNAME", "10.0.0.1"), "127.0.0.1");
  for (const auto& a : localAddresses()) EXPECT_EQ(bindAddress(a.address, "--bind", "127.0.0.1"), a.address);
  const std::string foreign = errorOf([] { bindAddress("192.0.2.77", "--bind", "127.0.0.1"); });
  EXPECT_NE(foreign.find("--bind 192.0.2.77 is not an address of this machine"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("127.0.0.1 (lo)"), std::string::npos) << "the message lists what there is: " << foreign;
  const std::string unknown = errorOf([] { bindAddress("nosuch7", "GLOO_SOCKET_IFNAME", "127.0.0.1"); });
  EXPECT_NE(unknown.find("GLOO_SOCKET_IFNAME nosuch7 is not an interface or address of this machine"),
            std::string::npos)
      << unknown;
}

TEST(HostNetwork, WithNothingNamedARankListensWhereItReachesTheMaster) {
  EXPECT_EQ(bindAddress("", "--bind", "127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(bindAddress("", "--bind", "localhost"), "127.0.0.1");
  for (const auto& a : localAddresses()) {
    if (a.address.find(':') != std::string::npos || a.interface == "lo") continue;
    // The master on this machine's own network address: the rank listens on that address, not on every interface.
    EXPECT_EQ(bindAddress("", "--bind", a.address), a.address) << a.interface;
  }
  EXPECT_NE(errorOf([] { bindAddress("", "--bind", "no-such-host.invalid"); }).find("does not resolve"),
            std::string::npos);
}

TEST(HostNetwork, SlurmNodeListsAndTasksPerNode) {
  EXPECT_EQ(firstSlurmHost("node07"), "node07");
  EXPECT_EQ(firstSlurmHost("node[07-09,12],gpu3"), "node07");
  EXPECT_EQ(firstSlurmHost("gpu[3,5-6]"), "gpu3");
  EXPECT_EQ(firstSlurmHost("rack[1-2]-n[4-5]"), "rack1-n4");
  EXPECT_EQ(firstSlurmHost("a,b"), "a");
  EXPECT_THROW(firstSlurmHost("node[1-3"), ConfigError);
  EXPECT_THROW(firstSlurmHost(""), ConfigError);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 0), 2);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 2), 2);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 3), 1);
  EXPECT_EQ(slurmTasksOnNode("2(x3),1", 4), 0);
  EXPECT_EQ(slurmTasksOnNode("4", 0), 4);
  EXPECT_EQ(slurmTasksOnNode("x", 0), 0);
}

TEST(HostNetwork, AnSrunJobStepIsAMultiProcessRunWithTheFirstNodeAsMaster) {
  ScopedEnv noRank("RANK", nullptr), noWorld("WORLD_SIZE", nullptr), noAddr("MASTER_ADDR", nullptr),
      noPort("MASTER_PORT", nullptr), noBind("PIPESQUEEZE_BIND", nullptr), ifname("GLOO_SOCKET_IFNAME", "ib0");
  ScopedEnv tasks("SLURM_STEP_NUM_TASKS", "4"), id("SLURM_PROCID", "3"), local("SLURM_LOCALID", "1"),
      node("SLURM_NODEID", "1"), perNode("SLURM_STEP_TASKS_PER_NODE", "2(x2)"),
      jobNodes("SLURM_JOB_NODELIST", "cn[10-13]"), nodes("SLURM_STEP_NODELIST", "cn[12-13]"),
      job("SLURM_JOB_ID", "48213"), step("SLURM_STEP_ID", "0"), jobTasks("SLURM_NTASKS", "8");
  ClusterOptions o = ClusterOptions::fromEnvironment();
  EXPECT_EQ(o.world, 4);
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.local_rank, 1);
  EXPECT_EQ(o.local_world, 2);
  EXPECT_EQ(o.master_addr, "cn12") << "the step's first node, not the job's";
  EXPECT_EQ(o.master_port, 29500 + int(48213LL * 31 % 1000));
  EXPECT_EQ(o.bind, "ib0");
  EXPECT_EQ(o.bind_source, "GLOO_SOCKET_IFNAME");
  EXPECT_EQ(o.ranks_from, "SLURM_PROCID/SLURM_STEP_NUM_TASKS");
  {
    ScopedEnv second("SLURM_STEP_ID", "1");
    EXPECT_NE(ClusterOptions::fromEnvironment().master_port, o.master_port) << "two steps of one job met on a port";
  }
  {
    // torchrun's variables win over Slurm's, and MASTER_ADDR over the node list.
    ScopedEnv rank("RANK", "0"), world("WORLD_SIZE", "2"), addr("MASTER_ADDR", "10.0.0.9"), lr("LOCAL_RANK", "0");
    o = ClusterOptions::fromEnvironment();
    EXPECT_EQ(o.world, 2);
    EXPECT_EQ(o.rank, 0);
    EXPECT_EQ(o.local_rank, 0);
    EXPECT_EQ(o.master_addr, "10.0.0.9");
    EXPECT_EQ(o.ranks_from, "RANK/WORLD_SIZE");
  }
  {
    ScopedEnv one("SLURM_STEP_NUM_TASKS", "1");  // a step of one task is a single process
    EXPECT_FALSE(ClusterOptions::fromEnvironment().active());
  }
  {
    // An sbatch script of a 4-task job has SLURM_NTASKS and SLURM_PROCID but no step: one process.
    ScopedEnv batch("SLURM_STEP_NUM_TASKS", nullptr);
    EXPECT_FALSE(ClusterOptions::fromEnvironment().active());
  }
  ScopedEnv noList("SLURM_JOB_NODELIST", nullptr), noList2("SLURM_NODELIST", nullptr),
      noList3("SLURM_STEP_NODELIST", nullptr);
  EXPECT_NE(errorOf([] { ClusterOptions::fromEnvironment(); }).find("set MASTER_ADDR"), std::string::npos);
  ScopedEnv addr("MASTER_ADDR", "10.0.0.9");  // the fix the message names works
  EXPECT_EQ(ClusterOptions::fromEnvironment().master_addr, "10.0.0.9");
}

}  // namespace
}  // namespace ps
