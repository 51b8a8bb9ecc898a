#pragma once
// One direction of a pipeline link between stages of two processes over a TCP connection of its own
// (engine/dist/LinkStream.h): a payload streams the moment it is sent, as the link model assumes. The receiving
// link decodes the payload as untrusted input (engine/compress/Payload.h).
#include "engine/dist/LinkStream.h"
#include "engine/pipeline/ClusterChannel.h"  // deliveryNs, awaitDelivery

namespace ps {

class StreamChannel : public RemoteEnd {
 public:
  explicit StreamChannel(std::unique_ptr<LinkStream> stream) : stream_(std::move(stream)) {}
  void push(Message m) override {
    stream_->send(std::move(m.payload.bytes), m.emulated_arrival, deliveryNs(m));
  }
  Message pop(uint64_t limit) override {
    Message m;
    int64_t deliver = 0;
    m.payload.bytes = stream_->receive(limit, &m.emulated_arrival, &deliver);
    awaitDelivery(deliver);
    return m;
  }
  void flush() override { stream_->flush(); }

 private:
  std::unique_ptr<LinkStream> stream_;
};

}  // namespace ps
