#pragma once
// The modelled network under a link: time = latency + 8 * wire bytes / bandwidth per message (docs/link-model.md).
// Every modelled time of the lab comes from the functions here: the live links, the replicas' gradient exchange and
// the replay of a saved step (engine/core/StepTrace.h) call the same arithmetic, so a replay of the recorded network
// gives the recorded time to the bit.
#include <algorithm>
#include <cstdint>

namespace ps {

struct LinkModel {
  double bandwidth_mbps = 10000;
  double latency_ms = 0;
  bool throttled = false;  // really wait the modelled time (demonstrations); otherwise only account for it
  // What a payload costs on the wire. `tcp`: a message travels in TCP/IPv4 segments over Ethernet (MTU 1500, TCP
  // timestamps), every 1448 payload bytes or part of them with 66 bytes of headers (Ethernet 14, IPv4 20, TCP 32),
  // which is what a shaped link counts: a bulk transfer gets 95.6% of the rate as payload. Otherwise an ideal link
  // that carries the payload alone.
  bool tcp = false;
  // Where a stage's messages leave. Each link direction is its own wire by default (point-to-point links between the
  // stages). `shared_egress`: every stage sends through one interface, so its activations to the next stage and its
  // gradients to the one before queue for the same bandwidth, as they do from a host with one network card (and
  // between the test hosts of tools/netns-hosts.sh).
  bool shared_egress = false;

  static constexpr uint64_t kTcpSegment = 1448, kTcpHeaders = 66;
  uint64_t wireBytes(uint64_t bytes) const {
    return tcp ? bytes + (bytes + kTcpSegment - 1) / kTcpSegment * kTcpHeaders : bytes;
  }
  double transferSeconds(uint64_t bytes) const { return 8.0 * double(wireBytes(bytes)) / (bandwidth_mbps * 1e6); }
  double latencySeconds() const { return latency_ms * 1e-3; }
  double messageSeconds(uint64_t bytes) const { return latencySeconds() + transferSeconds(bytes); }

  // A message of `bytes` ready to leave at `ready` on a wire that is free from `wireFree`: it leaves when both are,
  // holds the wire for its transfer (so `wireFree` moves on; the latency overlaps the next transfer) and arrives a
  // latency after its last byte left. Returns the arrival.
  double queue(double ready, uint64_t bytes, double& wireFree) const {
    wireFree = std::max(ready, wireFree) + transferSeconds(bytes);
    return wireFree + latencySeconds();
  }
  // A ring all-reduce of `values` float32 values among `replicas`: 2 (r - 1) rounds, each a latency and a 1/r share.
  double ringAllReduceSeconds(uint64_t values, int replicas) const {
    const double r = double(replicas);
    return 2.0 * (r - 1) * (latencySeconds() + transferSeconds(uint64_t(4.0 * double(values) / r)));
  }
  // A ring all-gather of one message from each of `replicas`, the largest `largestBytes`: r - 1 rounds of it.
  double allGatherSeconds(uint64_t largestBytes, int replicas) const {
    return (double(replicas) - 1) * messageSeconds(largestBytes);
  }
};

}  // namespace ps
