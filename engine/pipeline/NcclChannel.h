#pragma once
// One direction of a pipeline link between two processes whose stages run on GPUs: the payload's bytes cross on the
// GPUs' fabric through NCCL (NVLink within a machine, InfiniBand or RoCE between machines, where a socket would
// carry them otherwise), and a small announcement (the payload's size, its emulated arrival, a throttled link's
// delivery time) goes ahead through the cluster's Gloo messages, so the receiver knows what to expect and checks it
// before anything is allocated. Link accounting does not change: the link counts the payload before it is pushed.
//
// Each direction has its own two-rank communicator (the lower stage is its rank 0 and publishes its id in the run
// store), joined when the direction is first used: a stage sends without waiting for its receiver, and two ends
// sending to each other at once (1F1B) would otherwise queue behind each other on one stream. The body travels in
// the cluster's chunks, so a hostile announcement costs the receiver one chunk of memory, not what it announced.
//
// A payload's tail (Payload::tail: the bulk its codec left on the sender's GPU) goes from device memory to device
// memory, and the receiver decodes it there; only the host part (header and a few fields) is staged. A payload
// assembled on the host (a codec that keeps no tail) is staged onto the sender's GPU and fetched from the
// receiver's. Tails are checked as untrusted when they are decoded, like bytes.
#include "engine/dist/nccl/NcclGroup.h"
#include "engine/pipeline/ClusterChannel.h"

#include <memory>
#include <string>

namespace ps {

// The announcement ahead of a payload: the sizes of its host bytes and of its tail (16 bytes, little-endian on every
// machine we run on).
struct Announced {
  uint64_t bytes = 0, tail = 0;
};
std::vector<uint8_t> announcePayload(uint64_t bytes, uint64_t tail = 0);
// The sizes, checked: ClusterError naming `from` when the announcement is malformed or they add up to more than
// `limit`.
Announced readAnnouncement(const std::vector<uint8_t>& announcement, uint64_t limit, const std::string& from);

class NcclChannel : public RemoteEnd {
 public:
  // `peer`: the other end's rank; `device`: this stage's GPU; `name`: the link direction's name in the run store
  // ("link0/fwd/replica1"), `lowerEnd`: this process runs the lower stage of the link.
  NcclChannel(std::shared_ptr<Cluster> cluster, int peer, int tag, int device, std::string name, bool lowerEnd);
  void push(Message m) override;
  Message pop(uint64_t limit) override;
  bool takesTails() const override { return true; }

 private:
  NcclGroup& group();
  // This end's rank in the link's two-rank group (the lower stage is 0), and the other end's.
  int rank() const { return lowerEnd_ ? 0 : 1; }
  int peerRank() const { return 1 - rank(); }
  [[noreturn]] void fail(const std::exception& e, const char* doing) const;

  std::shared_ptr<Cluster> cluster_;
  int peer_, tag_, device_;
  std::string name_;
  bool lowerEnd_;
  std::unique_ptr<NcclGroup> group_;  // joined at first use, by the one thread that uses this end
};

}  // namespace ps
