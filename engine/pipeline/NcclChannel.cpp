#include "engine/pipeline/NcclChannel.h"

#include "engine/dist/Framing.h"

#include <cstring>

namespace ps {

std::vector<uint8_t> announcePayload(uint64_t bytes) {
  std::vector<uint8_t> out(sizeof bytes);
  std::memcpy(out.data(), &bytes, sizeof bytes);
  return out;
}

uint64_t readAnnouncement(const std::vector<uint8_t>& announcement, uint64_t limit, const std::string& from) {
  uint64_t bytes = 0;
  if (announcement.size() != sizeof bytes)
    throw ClusterError(from + " sent a payload announcement of " + std::to_string(announcement.size()) +
                       " bytes, not " + std::to_string(sizeof bytes));
  std::memcpy(&bytes, announcement.data(), sizeof bytes);
  const uint64_t most = std::min(limit, Cluster::kMaxMessageBytes);
  if (bytes > most)
    throw ClusterError(from + " announced a payload of " + std::to_string(bytes) + " bytes, more than the " +
                       std::to_string(most) + " this link accepts");
  return bytes;
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
  return *group_;
}

void NcclChannel::fail(const std::exception& e, const char* doing) const {
  if (dynamic_cast<const ClusterError*>(&e)) throw;
  throw ClusterError(std::string(doing) + " " + cluster_->describe(peer_) + " over NCCL (" + name_ +
                     ") failed: " + e.what());
}

void NcclChannel::push(Message m) {
  const auto& bytes = m.payload.bytes;
  cluster_->send(peer_, tag_, announcePayload(bytes.size()), m.emulated_arrival, deliveryNs(m));
  try {
    NcclGroup& g = group();
    for (const auto& [offset, size] : chunksOf(bytes.size())) g.send(bytes.data() + offset, size, peerRank());
  } catch (const std::exception& e) {
    fail(e, "sending a payload to");
  }
}

Message NcclChannel::pop(uint64_t limit) {
  Message m;
  int64_t deliver = 0;
  const uint64_t total = readAnnouncement(cluster_->receive(peer_, tag_, &m.emulated_arrival, &deliver, 64), limit,
                                          cluster_->describe(peer_));
  try {
    NcclGroup& g = group();
    m.payload.bytes = receiveChunked(total, [&](uint8_t* into, size_t size) { g.receive(into, size, peerRank()); });
  } catch (const std::exception& e) {
    fail(e, "receiving a payload from");
  }
  awaitDelivery(deliver);
  return m;
}

}  // namespace ps
