#pragma once
// The modelled network under a link: time = latency + 8 * wire bytes / bandwidth per message (docs/link-model.md).
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
};

}  // namespace ps
