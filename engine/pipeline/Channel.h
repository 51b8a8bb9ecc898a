#pragma once
// A FIFO of encoded messages between two stage threads of one process.
#include "engine/compress/Payload.h"
#include "engine/pipeline/StageStream.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace ps {

// Thrown in a waiting worker when another worker failed and the step is being abandoned.
class PipelineAborted : public std::runtime_error {
 public:
  PipelineAborted() : std::runtime_error("pipeline step aborted") {}
};

struct Message {
  Payload payload;
  Fence fence;                  // between two stages of this process: what the receiving stage's stream waits for
  double emulated_arrival = 0;  // on the step's emulated clock
  std::chrono::steady_clock::time_point deliver_at{};  // throttled mode: not before this wall time
};

// The other end of a channel in another process (engine/pipeline/ClusterChannel.h).
class RemoteEnd {
 public:
  virtual ~RemoteEnd() = default;
  virtual void push(Message m) = 0;
  // A message whose payload would exceed `limit` bytes is refused before it is received.
  virtual Message pop(uint64_t limit) = 0;
  // True when a payload may come with its tail on a device (Payload::tail): the end carries device memory as it is.
  // Otherwise the channel gathers every payload into host bytes first.
  virtual bool takesTails() const { return false; }
  // Returns once every message pushed so far has left this process's hands (the end of a step); throws the first
  // failure of a send that returned at once.
  virtual void flush() {}
};

class Channel {
 public:
  void push(Message m);
  // Blocks; throws PipelineAborted once aborted. `limit`: the largest payload the receiver accepts (enforced on
  // bytes from another process; this process's own messages are trusted).
  Message pop(uint64_t limit = UINT64_MAX);
  void abort();
  void reset();  // clears messages and the abort flag between steps
  // From now on messages go to (and come from) another process.
  void setRemote(std::shared_ptr<RemoteEnd> end) { remote_ = std::move(end); }

 private:
  std::shared_ptr<RemoteEnd> remote_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  bool aborted_ = false;
};

}  // namespace ps
