#include "engine/dist/ControlStar.h"

#include "engine/dist/Cluster.h"
#include "engine/dist/Framing.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace ps {
namespace {

std::string key(const char* way, int rank) { return std::string("control/") + way + "/" + std::to_string(rank); }

// The largest gathered list `world` parts of `limit` bytes make, capped where one message is capped.
uint64_t listLimit(int world, uint64_t limit) {
  const uint64_t most = Cluster::kMaxMessageBytes;
  const uint64_t header = 4 + 8 * uint64_t(world);
  return limit > (most - header) / uint64_t(world) ? most : header + limit * uint64_t(world);
}

}  // namespace

ControlStar::ControlStar(int rank, int world, const std::string& bindAddress, const std::string& token,
                         double timeoutS, const std::function<std::string(int)>& describe,
                         const LinkStream::Share& share)
    : rank_(rank), world_(world), describe_(describe), up_(size_t(world)), down_(size_t(world)) {
  auto peer = [&](int other) { return LinkStream::Peer{describe(rank), describe(other), token, timeoutS}; };
  // Receiving ends first, as for the links: they only listen and publish, so no rank waits on another until all
  // have published.
  if (rank == 0) {
    for (int r = 1; r < world; ++r) up_[size_t(r)] = LinkStream::receiving(bindAddress, key("up", r), peer(r), share);
    for (int r = 1; r < world; ++r) down_[size_t(r)] = LinkStream::sending(bindAddress, key("down", r), peer(r), share);
    // Rank 0's star is whole only once every rank has connected to it: a rank 0 with nothing more to say (its work
    // done, or failed) would otherwise close its listening ends under a rank that has not reached them yet, and that
    // rank would see a refused connection instead of what rank 0 sent.
    for (int r = 1; r < world; ++r) up_[size_t(r)]->accept();
  } else {
    down_[0] = LinkStream::receiving(bindAddress, key("down", rank), peer(0), share);
    up_[0] = LinkStream::sending(bindAddress, key("up", rank), peer(0), share);
  }
}

ControlStar::~ControlStar() = default;

std::vector<uint8_t> ControlStar::broadcast(std::vector<uint8_t> bytes, uint64_t limit) {
  if (rank_ != 0) return down_[0]->receive(limit, nullptr, nullptr);
  for (int r = 1; r < world_; ++r) down_[size_t(r)]->send(bytes, 0, 0);
  for (int r = 1; r < world_; ++r) down_[size_t(r)]->flush();
  return bytes;
}

std::vector<std::vector<uint8_t>> ControlStar::allGather(const std::vector<uint8_t>& mine, uint64_t limit) {
  if (rank_ != 0) {
    up_[0]->send(mine, 0, 0);
    up_[0]->flush();
    try {
      return unpackParts(down_[0]->receive(listLimit(world_, limit), nullptr, nullptr), size_t(world_), limit);
    } catch (const FrameError& e) {
      throw ClusterError(describe_(0) + " sent " + e.what() + " (a gather among all ranks)");
    }
  }
  auto parts = std::vector<std::vector<uint8_t>>(size_t(world_));
  parts[0] = mine;
  for (int r = 1; r < world_; ++r) {
    try {
      parts[size_t(r)] = up_[size_t(r)]->receive(limit, nullptr, nullptr);
    } catch (const ClusterError& e) {  // the size check's error names the stream; say which collective it was
      throw ClusterError(std::string(e.what()) + " (its part of a gather among all ranks, at most " +
                         std::to_string(limit) + " bytes)");
    }
  }
  const auto list = packParts(parts);
  for (int r = 1; r < world_; ++r) down_[size_t(r)]->send(list, 0, 0);
  for (int r = 1; r < world_; ++r) down_[size_t(r)]->flush();
  return parts;
}

ClockOffset ControlStar::clockOffset(int rounds, const std::function<int64_t()>& now) {
  if (rank_ == 0) {
    for (int round = 0; round < std::max(rounds, 1); ++round) {
      allGather({}, 0);  // past this only once every rank has started its trip
      const int64_t t = now();
      std::vector<uint8_t> reading(sizeof t);
      std::memcpy(reading.data(), &t, sizeof t);
      broadcast(std::move(reading), sizeof t);
    }
    return {};
  }
  ClockOffset best{0, std::numeric_limits<int64_t>::max()};
  for (int round = 0; round < std::max(rounds, 1); ++round) {
    const int64_t sent = now();
    allGather({}, 0);
    const auto reading = broadcast({}, sizeof(int64_t));
    const int64_t back = now();
    int64_t theirs = 0;
    if (reading.size() == sizeof theirs) std::memcpy(&theirs, reading.data(), sizeof theirs);
    // Steady clocks count from each machine's boot: a reading 70 years and more from ours (2^61 ns) is not a clock's.
    constexpr int64_t kFarthest = int64_t(1) << 61;
    if (reading.size() != sizeof theirs || theirs > sent + kFarthest || theirs < sent - kFarthest)
      throw ClusterError(describe_(0) + " sent a clock reading that is not one (" + std::to_string(reading.size()) +
                         " bytes" + (reading.size() == sizeof theirs ? ", 70 years and more from this rank's" : "") +
                         "), measuring the ranks' clock offsets");
    const int64_t half = (back - sent + 1) / 2;  // rounded up: the bound must hold
    if (half < best.bound_ns) best = {theirs - (sent + (back - sent) / 2), half};
  }
  // An offset inside its own uncertainty is no offset: ranks on rank 0's machine share its clock exactly, and moving
  // them by a measurement's noise would only misalign them. The bound then covers what was dropped.
  if (std::abs(best.offset_ns) <= best.bound_ns) best = {0, best.bound_ns + std::abs(best.offset_ns)};
  return best;
}

}  // namespace ps
