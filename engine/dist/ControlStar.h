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

 private:
  int rank_, world_;
  std::function<std::string(int)> describe_;
  // Rank 0: up_[r] receives from rank r and down_[r] sends to it (index 0 unused). Other ranks: up_[0] sends to
  // rank 0, down_[0] receives from it.
  std::vector<std::unique_ptr<LinkStream>> up_, down_;
};

}  // namespace ps
