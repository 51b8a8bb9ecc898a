#include "engine/dist/ReplicaMesh.h"

#include "engine/dist/Cluster.h"

#include <cstring>

namespace ps {

ReplicaMesh::ReplicaMesh(int me, int n, const std::string& prefix, const std::string& bindAddress,
                         const std::string& token, double timeoutS, const std::function<std::string(int)>& describe,
                         const LinkStream::Share& share)
    : me_(me), n_(n), describe_(describe), to_(size_t(n)), from_(size_t(n)) {
  auto peer = [&](int other) { return LinkStream::Peer{describe(me), describe(other), token, timeoutS}; };
  auto key = [&](int from, int to) { return prefix + "/" + std::to_string(from) + "-" + std::to_string(to); };
  // Receiving ends first: they only listen and publish, so no member waits on another until all have published.
  for (int j = 0; j < n; ++j)
    if (j != me) from_[size_t(j)] = LinkStream::receiving(bindAddress, key(j, me), peer(j), share);
  for (int j = 0; j < n; ++j)
    if (j != me) to_[size_t(j)] = LinkStream::sending(bindAddress, key(me, j), peer(j), share);
  // Whole once made: a member that ends early (its run failed) never closes a listening end under a member that has
  // not connected to it yet, which would see a refused connection instead of the failure.
  for (int j = 0; j < n; ++j)
    if (j != me) from_[size_t(j)]->accept();
}

ReplicaMesh::~ReplicaMesh() = default;

void ReplicaMesh::exchange(const std::shared_ptr<const std::vector<uint8_t>>& mine, uint64_t limit,
                           std::vector<std::vector<uint8_t>>& parts) {
  for (int j = 0; j < n_; ++j)
    if (j != me_) to_[size_t(j)]->send(mine, 0, 0);
  parts.resize(size_t(n_));
  for (int j = 0; j < n_; ++j) {
    if (j == me_) continue;
    try {
      from_[size_t(j)]->receiveInto(parts[size_t(j)], limit, nullptr, nullptr);
    } catch (const ClusterError& e) {  // the size check's error names the stream; say which collective it was
      throw ClusterError(std::string(e.what()) + " (its part of a gather among the replicas, at most " +
                         std::to_string(limit) + " bytes)");
    }
  }
  for (int j = 0; j < n_; ++j)
    if (j != me_) to_[size_t(j)]->flush();
}

std::vector<std::vector<uint8_t>> ReplicaMesh::allGather(const std::vector<uint8_t>& mine, uint64_t limit) {
  std::vector<std::vector<uint8_t>> parts;
  exchange(std::make_shared<const std::vector<uint8_t>>(mine), limit, parts);
  parts[size_t(me_)] = mine;
  return parts;
}

std::shared_ptr<std::vector<uint8_t>> ReplicaMesh::buffer(size_t slot, const void* data, size_t bytes) {
  if (spare_.size() <= slot) spare_.resize(slot + 1);
  auto& b = spare_[slot];
  if (!b || b.use_count() > 1) b = std::make_shared<std::vector<uint8_t>>();  // still queued: never overwritten
  b->resize(bytes);
  if (bytes) std::memcpy(b->data(), data, bytes);
  return b;
}

void ReplicaMesh::allReduce(float* data, int64_t count) {
  if (count <= 0) return;
  if (n_ > 2 && uint64_t(count) * sizeof(float) >= kRingBytes) {
    ringAllReduce(data, count);
    return;
  }
  const uint64_t bytes = uint64_t(count) * sizeof(float);
  // This replica's values, sent down every stream from one buffer, reused once the streams have let go of it.
  const auto mine = buffer(0, data, size_t(bytes));
  exchange(mine, bytes, incoming_);
  std::vector<const float*> parts(static_cast<size_t>(n_), nullptr);
  for (int j = 0; j < n_; ++j) {
    const auto& part = j == me_ ? *mine : incoming_[size_t(j)];
    if (part.size() != bytes)
      throw ClusterError(describe_(j) + " sent " + std::to_string(part.size()) + " bytes to an all-reduce of " +
                         std::to_string(bytes) + " among the replicas; seen by " + describe_(me_));
    parts[size_t(j)] = reinterpret_cast<const float*>(part.data());
  }
  for (int64_t i = 0; i < count; ++i) {  // member order on every member: the same sum to the last bit
    float sum = 0.0f;
    for (const float* p : parts) sum += p[i];
    data[i] = sum;
  }
}

// Reduce-scatter, then all-gather, around the ring me -> me + 1: n - 1 steps each, a chunk of count / n values per
// step and stream. Each chunk is summed once, on its way round, and then copied to every member as its owner holds it.
void ReplicaMesh::ringAllReduce(float* data, int64_t count) {
  const int next = (me_ + 1) % n_, previous = (me_ + n_ - 1) % n_;
  const auto chunk = [&](int c) { return (c % n_ + n_) % n_; };  // chunk c of n, for any c
  const auto begin = [&](int c) { return count * chunk(c) / n_; };
  const auto size = [&](int c) { return (chunk(c) == n_ - 1 ? count : begin(c + 1)) - begin(c); };
  auto& in = incoming_.empty() ? incoming_.emplace_back() : incoming_.front();
  const auto step = [&](size_t slot, int sent, int received, bool add) {
    to_[size_t(next)]->send(buffer(slot, data + begin(sent), size_t(size(sent)) * sizeof(float)), 0, 0);
    const uint64_t bytes = uint64_t(size(received)) * sizeof(float);
    try {
      from_[size_t(previous)]->receiveInto(in, bytes, nullptr, nullptr);
    } catch (const ClusterError& e) {
      throw ClusterError(std::string(e.what()) + " (its part of an all-reduce among the replicas, at most " +
                         std::to_string(bytes) + " bytes)");
    }
    if (in.size() != bytes)
      throw ClusterError(describe_(previous) + " sent " + std::to_string(in.size()) + " bytes of an all-reduce's " +
                         std::to_string(bytes) + " among the replicas; seen by " + describe_(me_));
    const auto* values = reinterpret_cast<const float*>(in.data());
    float* into = data + begin(received);
    if (add) {
      for (int64_t k = 0; k < size(received); ++k) into[k] = values[k] + into[k];
    } else {
      std::memcpy(into, values, size_t(bytes));
    }
  };
  for (int s = 0; s < n_ - 1; ++s) step(size_t(s), me_ - s, me_ - s - 1, true);
  for (int s = 0; s < n_ - 1; ++s) step(size_t(n_ - 1 + s), me_ + 1 - s, me_ - s, false);
  to_[size_t(next)]->flush();
}

}  // namespace ps
