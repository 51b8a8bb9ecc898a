#pragma once
// The modelled network under a link: time = latency + 8 * bytes / bandwidth per message.
#include <cstdint>

namespace ps {

struct LinkModel {
  double bandwidth_mbps = 10000;
  double latency_ms = 0;
  bool throttled = false;  // really wait the modelled time (demonstrations); otherwise only account for it

  double transferSeconds(uint64_t bytes) const { return 8.0 * double(bytes) / (bandwidth_mbps * 1e6); }
  double latencySeconds() const { return latency_ms * 1e-3; }
  double messageSeconds(uint64_t bytes) const { return latencySeconds() + transferSeconds(bytes); }
};

}  // namespace ps
