#pragma once
// One direction of a pipeline link whose two ends live in different processes: the encoded payload and its
// emulated arrival time travel through the cluster's point-to-point messages. The receiving link decodes the
// payload as untrusted input (engine/compress/Payload.h).
#include "engine/dist/Cluster.h"
#include "engine/pipeline/Channel.h"

#include <algorithm>
#include <thread>

namespace ps {

class ClusterChannel : public RemoteEnd {
 public:
  ClusterChannel(std::shared_ptr<Cluster> cluster, int peer, int tag)
      : cluster_(std::move(cluster)), peer_(peer), tag_(tag) {}
  // Throttled links: the delivery deadline travels on the steady clock, system-wide on one host (throttling is a
  // demonstration mode for one machine); the channel's pop() sleeps until it, as in-process.
  void push(Message m) override {
    const int64_t deliver = m.deliver_at == std::chrono::steady_clock::time_point{}
                                ? 0
                                : std::chrono::duration_cast<std::chrono::nanoseconds>(m.deliver_at.time_since_epoch()).count();
    cluster_->send(peer_, tag_, std::move(m.payload.bytes), m.emulated_arrival, deliver);
  }
  Message pop(uint64_t limit) override {
    Message m;
    int64_t deliver = 0;
    m.payload.bytes = cluster_->receive(peer_, tag_, &m.emulated_arrival, &deliver, limit);
    if (deliver > 0)
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deliver)));
    return m;
  }

 private:
  std::shared_ptr<Cluster> cluster_;
  int peer_, tag_;
};

}  // namespace ps
