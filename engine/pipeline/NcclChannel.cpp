#include "engine/pipeline/NcclChannel.h"

#include "engine/tensors/CudaStreams.h"

#include "engine/dist/Framing.h"

#include <cstring>

namespace ps {

std::vector<uint8_t> announcePayload(uint64_t bytes, uint64_t tail) {
  std::vector<uint8_t> out(2 * sizeof(uint64_t));
  std::memcpy(out.data(), &bytes, sizeof bytes);
  std::memcpy(out.data() + sizeof bytes, &tail, sizeof tail);
  return out;
}

Announced readAnnouncement(const std::vector<uint8_t>& announcement, uint64_t limit, const std::string& from) {
  Announced a;
  if (announcement.size() != 2 * sizeof(uint64_t))
    throw ClusterError(from + " sent a payload announcement of " + std::to_string(announcement.size()) +
                       " bytes, not " + std::to_string(2 * sizeof(uint64_t)));
  std::memcpy(&a.bytes, announcement.data(), sizeof a.bytes);
  std::memcpy(&a.tail, announcement.data() + sizeof a.bytes, sizeof a.tail);
  const uint64_t most = std::min(limit, Cluster::kMaxMessageBytes);
  if (a.bytes > most || a.tail > most - a.bytes)
    throw ClusterError(from + " announced a payload of " + std::to_string(a.bytes) + " + " + std::to_string(a.tail) +
                       " bytes, more than the " + std::to_string(most) + " this link accepts");
  return a;
}

NcclChannel::NcclChannel(std::shared_ptr<Cluster> cluster, int peer, int tag, int device, std::string name,
                         bool lowerEnd)
    : cluster_(std::move(cluster)),
      peer_(peer),
      tag_(tag),
      device_(device),
      name_(std::move(name)),
      lowerEnd_(lowerEnd) {}

NcclGroup& NcclChannel::group() {
  if (!group_) {
    const std::string among = "the two ends of " + name_;
    group_ = std::make_unique<NcclGroup>(
        rank(), 2, device_,
        [&](const std::vector<uint8_t>& id) { return cluster_->share("nccl/" + name_, lowerEnd_, id, among); },
        cluster_->options().timeout_s);
  }
  // Ordered after the calling thread's torch work: a stage's own stream in training, the main thread's in evaluation.
  group_->setTorchStream(currentCudaStream(device_));
  return *group_;
}

void NcclChannel::fail(const std::exception& e, const char* doing) const {
  if (dynamic_cast<const ClusterError*>(&e)) throw;
  throw ClusterError(std::string(doing) + " " + cluster_->describe(peer_) + " over NCCL (" + name_ +
                     ") failed: " + e.what());
}

void NcclChannel::push(Message m) {
  Payload& p = m.payload;
  // Only memory of this group's GPU goes out as it is; a tail anywhere else is gathered with the rest.
  if (p.tail.defined() && !(p.tail.is_cuda() && p.tail.device().index() == device_)) p.gather();
  const torch::Tensor tail = p.tail.defined() ? p.tail.contiguous() : torch::Tensor();
  const uint64_t tailBytes = tail.defined() ? uint64_t(tail.numel()) : 0;
  cluster_->send(peer_, tag_, announcePayload(p.bytes.size(), tailBytes), m.emulated_arrival, deliveryNs(m));
  try {
    NcclGroup& g = group();
    for (const auto& [offset, size] : chunksOf(p.bytes.size())) g.send(p.bytes.data() + offset, size, peerRank());
    if (tailBytes) g.sendDevice(tail.data_ptr(), tailBytes, peerRank(), std::make_shared<torch::Tensor>(tail));
  } catch (const std::exception& e) {
    fail(e, "sending a payload to");
  }
}

Message NcclChannel::pop(uint64_t limit) {
  Message m;
  int64_t deliver = 0;
  const Announced a = readAnnouncement(cluster_->receive(peer_, tag_, &m.emulated_arrival, &deliver, 64), limit,
                                       cluster_->describe(peer_));
  try {
    NcclGroup& g = group();
    m.payload.bytes = receiveChunked(a.bytes, [&](uint8_t* into, size_t size) { g.receive(into, size, peerRank()); });
    if (a.tail) {  // within the limit the receiver set from the shape it expects
      m.payload.tail =
          torch::empty({int64_t(a.tail)}, torch::TensorOptions(torch::kUInt8).device(torch::kCUDA, device_));
      g.receiveDevice(m.payload.tail.data_ptr(), a.tail, peerRank(), std::make_shared<torch::Tensor>(m.payload.tail));
    }
  } catch (const std::exception& e) {
    fail(e, "receiving a payload from");
  }
  awaitDelivery(deliver);
  return m;
}

}  // namespace ps
