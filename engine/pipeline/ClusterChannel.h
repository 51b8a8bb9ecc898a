#pragma once
// One direction of a pipeline link whose two ends live in different processes: the encoded payload and its
// emulated arrival time travel through the cluster's point-to-point messages. The receiving link decodes the
// payload as untrusted input (engine/compress/Payload.h).
#include "engine/dist/Cluster.h"
#include "engine/pipeline/Channel.h"

#include <algorithm>
#include <thread>

namespace ps {

// Throttled links: the delivery deadline travels on the steady clock, system-wide on one host (throttling is a
// demonstration mode for one machine); the receiving channel sleeps until it, as in-process.
inline int64_t deliveryNs(const Message& m) {
  return m.deliver_at == std::chrono::steady_clock::time_point{}
             ? 0
             : std::chrono::duration_cast<std::chrono::nanoseconds>(m.deliver_at.time_since_epoch()).count();
}
inline void awaitDelivery(int64_t deliverNs) {
  if (deliverNs > 0)
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deliverNs)));
}

class ClusterChannel : public RemoteEnd {
 public:
  ClusterChannel(std::shared_ptr<Cluster> cluster, int peer, int tag)
      : cluster_(std::move(cluster)), peer_(peer), tag_(tag) {}
  void push(Message m) override {
    cluster_->send(peer_, tag_, std::move(m.payload.bytes), m.emulated_arrival, deliveryNs(m));
  }
  Message pop(uint64_t limit) override {
    Message m;
    int64_t deliver = 0;
    m.payload.bytes = cluster_->receive(peer_, tag_, &m.emulated_arrival, &deliver, limit);
    awaitDelivery(deliver);
    return m;
  }
  // Gloo completes a send on its own thread: the messages have left this process's hands once the cluster says so.
  void flush() override { cluster_->flushSends(); }

 private:
  std::shared_ptr<Cluster> cluster_;
  int peer_, tag_;
};

}  // namespace ps
