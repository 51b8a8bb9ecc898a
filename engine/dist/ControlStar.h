#pragma once
// The collectives among all ranks that every multi-process step runs (rank 0's commands to every rank, every rank's
// step report to every rank), over a star of link streams around rank 0 (engine/dist/LinkStream.h): an up stream
// from each rank to rank 0 and a down stream back. A broadcast is one latency; an all-gather is two (the reports
// up, the gathered list down), with no handshake before any of them. Gloo's collectives cost several round trips
// each here, because Gloo moves no message before its receiver asks for it, and a step's control round took about
// 6.5 latencies (docs/link-model.md).
//
// Used by one thread at a time (the session's). Everything received is untrusted: sizes are checked against the
// caller's limit before anything is allocated, and a gathered list (engine/dist/Framing.h: packParts) must hold
// exactly one part per rank.
// Torch-free.
#include "engine/dist/LinkStream.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ps {

// Where rank 0's steady clock stands against this rank's: rank 0's reading = this rank's + offset_ns, known to
// within bound_ns either way (half the round trip it was measured over). Rank 0's own is {0, 0}.
struct ClockOffset {
  int64_t offset_ns = 0, bound_ns = 0;
};

class ControlStar {
 public:
  // Every rank makes its star at the same time. `describe(r)` names rank r in errors ("rank 2 (stage 0, replica 1)").
  ControlStar(int rank, int world, const std::string& bindAddress, const std::string& token, double timeoutS,
              const std::function<std::string(int)>& describe, const LinkStream::Share& share);
  ~ControlStar();

  // Rank 0's `bytes` on every rank (other ranks pass anything); at most `limit` bytes.
  std::vector<uint8_t> broadcast(std::vector<uint8_t> bytes, uint64_t limit);
  // Every rank's `mine`, in rank order, on every rank; a part over `limit` bytes is refused naming its rank.
  std::vector<std::vector<uint8_t>> allGather(const std::vector<uint8_t>& mine, uint64_t limit);
  // Every rank at once: this rank's clock against rank 0's, by Cristian's method over `rounds` round trips (each a
  // gather, after which rank 0 reads its clock and broadcasts the reading); the round with the shortest trip wins.
  // Rank 0's reading lies between the start and the end of the trip, so half the trip bounds the error. An offset
  // within that bound is taken as none (ranks on one machine share the steady clock exactly), the bound widened by it.
  // `now` reads this rank's steady clock in nanoseconds (tests give a skewed one). Ranks on one machine share the
  // steady clock; ranks on several do not, and their wall-clock timelines are laid on rank 0's clock with this offset.
  ClockOffset clockOffset(int rounds, const std::function<int64_t()>& now);

 private:
  int rank_, world_;
  std::function<std::string(int)> describe_;
  // Rank 0: up_[r] receives from rank r and down_[r] sends to it (index 0 unused). Other ranks: up_[0] sends to
  // rank 0, down_[0] receives from it.
  std::vector<std::unique_ptr<LinkStream>> up_, down_;
};

}  // namespace ps
