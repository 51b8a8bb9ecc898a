#pragma once
// The collectives among a stage's replicas (the gradient exchange's all-gathers and all-reduces), over a full mesh of
// link streams (engine/dist/LinkStream.h): a stream from every replica to every other. An all-gather sends this
// replica's part down each of its streams and reads one part from each of the others: one latency. An all-reduce of
// two replicas, or of a few values, is such an all-gather, summed in replica order; a large one among three or more
// goes round a ring (reduce-scatter, then all-gather) so that no replica sends its values n - 1 times. Either way
// every replica ends with the same sum to the last bit. (The emulated time is the link model's ring either way.)
//
// The streams' listening ends take only connections that name the stream and present the run's token, so a
// connection from another process cannot take a replica's place, as it could take one of Gloo's listeners.
// Used by one thread at a time (the stage's). Everything received is untrusted: each part is checked against the
// caller's limit before anything is allocated, and an all-reduce's parts must have exactly its length.
// Torch-free.
#include "engine/dist/LinkStream.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ps {

class ReplicaMesh {
 public:
  // Every member of the mesh makes it at the same time; it returns once every other member has connected (at most
  // timeoutS). This member is `me` of `n`; `describe(i)` names member i in
  // errors ("rank 3 (stage 1, replica 1)"); streams are published under `prefix` through `share`.
  ReplicaMesh(int me, int n, const std::string& prefix, const std::string& bindAddress, const std::string& token,
              double timeoutS, const std::function<std::string(int)>& describe, const LinkStream::Share& share);
  ~ReplicaMesh();
  ReplicaMesh(const ReplicaMesh&) = delete;
  ReplicaMesh& operator=(const ReplicaMesh&) = delete;

  // Every member's `mine`, in member order; a part over `limit` bytes is refused naming its member.
  std::vector<std::vector<uint8_t>> allGather(const std::vector<uint8_t>& mine, uint64_t limit);
  // `data` becomes the sum of every member's `data` (count floats each), added in member order.
  void allReduce(float* data, int64_t count);

 private:
  // All-reduces of at least this many bytes among three or more replicas go round a ring: each replica sends about
  // twice its values in all, instead of n - 1 times, at 2 (n - 1) latencies instead of one.
  static constexpr uint64_t kRingBytes = uint64_t(1) << 20;
  void ringAllReduce(float* data, int64_t count);
  // A buffer holding a copy of `bytes` from `data` for the streams to send: slot `slot`'s, reused once the streams
  // have let go of it.
  std::shared_ptr<std::vector<uint8_t>> buffer(size_t slot, const void* data, size_t bytes);
  // Sends `mine` to every other member and receives each one's part into `parts` (own index left as it was).
  void exchange(const std::shared_ptr<const std::vector<uint8_t>>& mine, uint64_t limit,
                std::vector<std::vector<uint8_t>>& parts);

  int me_, n_;
  std::function<std::string(int)> describe_;
  std::vector<std::unique_ptr<LinkStream>> to_, from_;  // index: the other member (own index unused)
  // Reused: gradients cross every step, and fresh large buffers cost page faults each time.
  std::vector<std::shared_ptr<std::vector<uint8_t>>> spare_;
  std::vector<std::vector<uint8_t>> incoming_;
};

}  // namespace ps
