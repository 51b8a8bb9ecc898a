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
  void push(Message m) override {
    double delay = 0;  // throttled links: the wall time left until delivery travels as a duration
    if (m.deliver_at != std::chrono::steady_clock::time_point{})
      delay = std::max(0.0, std::chrono::duration<double>(m.deliver_at - std::chrono::steady_clock::now()).count());
    cluster_->send(peer_, tag_, std::move(m.payload.bytes), m.emulated_arrival, delay);
  }
  Message pop() override {
    Message m;
    double delay = 0;
    m.payload.bytes = cluster_->receive(peer_, tag_, &m.emulated_arrival, &delay);
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    return m;
  }

 private:
  std::shared_ptr<Cluster> cluster_;
  int peer_, tag_;
};

}  // namespace ps
