#pragma once
// Where a rank listens and how it finds its peers on a cluster: this machine's addresses, the address a `--bind`
// (an address or an interface name) stands for, and the rank layout a Slurm job step gives. Torch-free.
#include <map>
#include <string>
#include <vector>

namespace ps {

struct LocalAddress {
  std::string interface, address;  // "eth0", "10.1.2.3" (IPv4 and IPv6, numeric)
};
std::vector<LocalAddress> localAddresses();

// The numeric address this rank's connections listen on.
//  - `named` an address of this machine: itself; an interface name (as Gloo's GLOO_SOCKET_IFNAME takes): its IPv4
//    address (else its first one);
//  - `named` empty: 127.0.0.1 when `masterAddr` is on loopback, else the local address the route to `masterAddr`
//    leaves from, so a multi-machine run listens on the network that reaches rank 0, and nowhere else.
// Anything else is a ConfigError naming what was given (`source`: "--bind", "GLOO_SOCKET_IFNAME", ...) and this
// machine's addresses.
std::string bindAddress(const std::string& named, const std::string& source, const std::string& masterAddr);

// The first host of a Slurm host list: "node[07-09,12],gpu3" -> "node07", "rack[1-2]-n[4-5]" -> "rack1-n4".
// Throws ConfigError for an empty or unbalanced list.
std::string firstSlurmHost(const std::string& hostList);
// Tasks on node `node` from SLURM_TASKS_PER_NODE ("2(x3),1": nodes 0-2 run 2, node 3 runs 1); 0 when unknown.
int slurmTasksOnNode(const std::string& tasksPerNode, int node);

}  // namespace ps
