#pragma once
// The processes of a multi-process run on torch.distributed (c10d): rendezvous through rank 0's store (listening on
// MASTER_ADDR only, and answering only ranks that present the run's token), TCP streams of its own and, where a run
// asks for them, Gloo's point-to-point messages.
// A run of S stages and R replicas has S x R ranks; rank = replica * S + stage, so rank 0 is the first stage of the
// first replica and keeps the run store.
//
// Three channels keep traffic apart, each used by one thread at a time: a star of TCP streams around rank 0 for
// collectives among all ranks (the session thread: commands, step reports, evaluation reports;
// engine/dist/ControlStar.h), a mesh of TCP streams among a stage's replicas (the stage thread's gradient exchange;
// engine/dist/ReplicaMesh.h), and, only for links that do not have streams of their own, Gloo point-to-point
// messages. The streams' listeners take only the run's own ranks; Gloo's take whatever connects first, so Gloo is
// connected last, checked (engine/dist/GlooCheck.h), and formed again, agreed through the star, until every rank's
// formed and answered (a connection from another process can take one of its listeners), for at most the run's
// timeout.
// Every byte received from another rank is untrusted: sizes are checked before anything is allocated.
// No torch in this header, so the session and the CLI include it cheaply.
#include "engine/dist/KeyValueStore.h"  // freeLoopbackPort, newStoreToken

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

// Another rank failed, closed its connection or did not answer in time. The message names the rank.
class ClusterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClusterOptions {
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int rank = 0, world = 1;
  int local_world = 0;               // processes on this machine (0: all of them); shares the cores
  int local_rank = -1;               // this process among them (LOCAL_RANK, SLURM_LOCALID; -1: unknown): its GPU
  // The address or interface this rank's connections listen on, and who named it ("--bind", "PIPESQUEEZE_BIND",
  // "GLOO_SOCKET_IFNAME"). Empty: loopback for a master on loopback, else the address that routes to the master
  // (engine/dist/HostNetwork.h).
  std::string bind, bind_source = "--bind";
  std::string ranks_from;            // the variables the rank layout came from ("RANK/WORLD_SIZE", Slurm's)
  std::string token;                 // presented to the rendezvous store (rank 0 refuses connections without it)
  double timeout_s = 120;            // a peer silent for longer is declared failed
  bool active() const { return world > 1; }

  // torchrun-style variables: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_WORLD_SIZE, LOCAL_RANK, and
  // PIPESQUEEZE_BIND (else GLOO_SOCKET_IFNAME) and PIPESQUEEZE_STORE_TOKEN. Without RANK and WORLD_SIZE, a Slurm job
  // step of several tasks (`srun`): SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, the tasks on this node, and
  // the step's first node as the master (MASTER_ADDR and MASTER_PORT still win; the port defaults to 29500 plus the
  // job and step ids modulo 1000, so two jobs or steps sharing a node do not meet).
  // Unset: a single process. Half set or malformed: ConfigError naming the variable.
  static ClusterOptions fromEnvironment();
};

class Cluster {
 public:
  // Connects to the other ranks (blocks until all of them are there, at most timeout_s).
  Cluster(const ClusterOptions& options, int stages, int replicas);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int rank() const { return options_.rank; }
  int world() const { return options_.world; }
  int stages() const { return stages_; }
  int replicas() const { return replicas_; }
  int stage() const { return rank() % stages_; }
  int replica() const { return rank() / stages_; }
  int rankOf(int stage, int replica) const { return replica * stages_ + stage; }
  std::string describe(int rank) const;  // "rank 3 (stage 1, replica 1)"
  const ClusterOptions& options() const { return options_; }
  // The numeric address this rank listens on (engine/dist/HostNetwork.h: --bind, or the route to the master).
  const std::string& bindAddress() const { return bindAddress_; }
  // Rank 0's steady clock = this rank's + clockOffsetNs(), to within half a round trip of the control star (measured
  // once, when the ranks connected: ControlStar::clockOffset; 0 on rank 0 and on ranks sharing its machine's clock).
  int64_t clockOffsetNs() const { return clockOffsetNs_; }

  // Gloo's point-to-point group, for links through Gloo and NCCL's announcements: made only where a run needs it
  // (every rank calls this at the same point), so a run without it has no Gloo listener open while it starts.
  void openPointToPoint();
  // Point to point (after openPointToPoint()). Sends return at once (the bytes are kept until the peer takes them; a
  // blocking send would deadlock two stages sending to each other); flushSends() waits until every send was taken.
  // `stamp` travels with the bytes (the emulated clock of a message), and `deliverNs` (a throttled link's
  // delivery time on the steady clock, which is system-wide on one host; the receiver gets it capped at the
  // timeout). A message announcing more than `limit` bytes is refused before anything is allocated.
  void send(int peer, int tag, std::vector<uint8_t> bytes, double stamp = 0, int64_t deliverNs = 0);
  std::vector<uint8_t> receive(int peer, int tag, double* stamp = nullptr, int64_t* deliverNs = nullptr,
                               uint64_t limit = kMaxMessageBytes);
  void flushSends();

  // Among the replicas of this rank's stage (rank order = replica order).
  std::vector<std::vector<uint8_t>> allGatherReplicas(const std::vector<uint8_t>& mine,
                                                      uint64_t limit = kMaxMessageBytes);
  void allReduceReplicas(float* data, int64_t n);  // sum in place
  // Replica 0 of this stage publishes `mine` under `key`; every replica gets it back (NCCL's unique id).
  std::vector<uint8_t> shareAmongReplicas(const std::string& key, const std::vector<uint8_t>& mine);
  // The rank with `publish` set stores `mine` under `key` (one run-wide name); every rank asking for `key` gets it
  // back, waiting for it at most the store's timeout. `among` names the ranks in errors ("the replicas of stage 1").
  std::vector<uint8_t> share(const std::string& key, bool publish, const std::vector<uint8_t>& mine,
                             const std::string& among);
  // Among all ranks.
  std::vector<std::vector<uint8_t>> allGatherWorld(const std::vector<uint8_t>& mine, uint64_t limit = kMaxControlBytes);
  std::vector<uint8_t> broadcastWorld(std::vector<uint8_t> bytes);  // rank 0's bytes reach every rank (control)

  // A failing rank leaves its reason in the store; rank 0 reads them to name the rank that failed first.
  void reportFault(const std::string& what) noexcept;
  std::vector<std::string> faults(double waitSeconds) noexcept;  // the other ranks' reports
  // Every rank beats a counter in the store twice a second from its own thread; the ranks whose counter does not
  // move within `seconds` are dead or hung (a stopped process stops beating too).
  std::vector<int> silentRanks(double seconds) noexcept;

  static constexpr uint64_t kMaxMessageBytes = uint64_t(1) << 34;  // 16 GiB: a hostile size asks for no more
  static constexpr uint64_t kMaxControlBytes = uint64_t(64) << 20;  // step reports, commands, stage cuts

 private:
  struct Impl;
  ClusterOptions options_;
  int stages_, replicas_;
  std::string bindAddress_;
  int64_t clockOffsetNs_ = 0;
  std::unique_ptr<Impl> impl_;
};

// The variable that carries the rendezvous store's token to the ranks a launcher starts.
constexpr const char* kStoreTokenVariable = "PIPESQUEEZE_STORE_TOKEN";

}  // namespace ps
