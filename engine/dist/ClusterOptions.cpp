// ClusterOptions::fromEnvironment: the rank layout torchrun or Slurm hands a process, and where it listens.
#include "engine/dist/Cluster.h"
#include "engine/dist/HostNetwork.h"
#include "engine/errors/ConfigError.h"

#include <climits>
#include <cstdlib>

namespace ps {
namespace {

int envInt(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < lo || x > hi)
    throw ConfigError(std::string("environment variable ") + name + " = '" + v + "' is not an integer in " +
                      std::to_string(lo) + " .. " + std::to_string(hi));
  return int(x);
}

std::string envText(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// A Slurm job step of several tasks, when RANK and WORLD_SIZE are not set: `srun pipesqueeze-cli train ...`. Only
// srun sets the step's variables (SLURM_STEP_*): a batch script of an `sbatch --ntasks=4` job also has SLURM_NTASKS
// and SLURM_PROCID, but it is one process, and must not wait for ranks that never come.
bool fromSlurm(ClusterOptions& o) {
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (!tasks || !std::getenv("SLURM_PROCID") || envInt("SLURM_STEP_NUM_TASKS", 1, 1, 1 << 20) < 2) return false;
  o.ranks_from = "SLURM_PROCID/SLURM_STEP_NUM_TASKS";
  o.world = envInt("SLURM_STEP_NUM_TASKS", 1, 1, 4096);
  o.rank = envInt("SLURM_PROCID", 0, 0, o.world - 1);
  o.local_rank = envInt("SLURM_LOCALID", -1, 0, 4096);
  const int node = envInt("SLURM_NODEID", 0, 0, 1 << 20);
  o.local_world = slurmTasksOnNode(envText("SLURM_STEP_TASKS_PER_NODE", envText("SLURM_TASKS_PER_NODE", "")), node);
  // The step's nodes, not the job's: a step may run on some of them. MASTER_ADDR, when set, wins (read after this).
  const std::string nodes =
      envText("SLURM_STEP_NODELIST", envText("SLURM_JOB_NODELIST", envText("SLURM_NODELIST", "")));
  if (!nodes.empty())
    o.master_addr = firstSlurmHost(nodes);
  else if (!std::getenv("MASTER_ADDR"))
    throw ConfigError("a Slurm job step (SLURM_STEP_NUM_TASKS = " + std::string(tasks) +
                      ") without SLURM_STEP_NODELIST: set MASTER_ADDR to the host of task 0");
  // Two jobs on a node, or two steps of one job, do not meet on one port.
  const int job = envInt("SLURM_JOB_ID", 0, 0, INT_MAX), step = envInt("SLURM_STEP_ID", 0, 0, INT_MAX);
  o.master_port = 29500 + int((int64_t(job) * 31 + step) % 1000);
  return true;
}

}  // namespace

ClusterOptions ClusterOptions::fromEnvironment() {
  ClusterOptions o;
  if (const char* named = std::getenv("GLOO_SOCKET_IFNAME"); named && *named) {
    o.bind = named;
    o.bind_source = "GLOO_SOCKET_IFNAME";
  }
  if (const char* named = std::getenv("PIPESQUEEZE_BIND"); named && *named) {
    o.bind = named;
    o.bind_source = "PIPESQUEEZE_BIND";
  }
  o.token = envText(kStoreTokenVariable, "");
  const bool anySet = std::getenv("WORLD_SIZE") || std::getenv("RANK");
  if (!anySet && !fromSlurm(o)) return o;
  if (anySet) {
    if (!std::getenv("WORLD_SIZE") || !std::getenv("RANK"))
      throw ConfigError("RANK and WORLD_SIZE must be set together for a multi-process run (found only " +
                        std::string(std::getenv("RANK") ? "RANK" : "WORLD_SIZE") + ")");
    o.ranks_from = "RANK/WORLD_SIZE";
    o.world = envInt("WORLD_SIZE", 1, 1, 4096);
    o.rank = envInt("RANK", 0, 0, o.world - 1);
    o.local_world = envInt("LOCAL_WORLD_SIZE", 0, 0, 4096);
    o.local_rank = envInt("LOCAL_RANK", -1, 0, 4096);
  }
  o.master_addr = envText("MASTER_ADDR", o.master_addr);
  o.master_port = envInt("MASTER_PORT", o.master_port, 1, 65535);
  return o;
}

}  // namespace ps
