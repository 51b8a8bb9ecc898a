#pragma once
// A FIFO of encoded messages between two stage threads of one process.
#include "engine/compress/Payload.h"

#include <chrono>
#include <condition_variable>
#include <deque>
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
  double emulated_arrival = 0;  // on the step's emulated clock
  std::chrono::steady_clock::time_point deliver_at{};  // throttled mode: not before this wall time
};

class Channel {
 public:
  void push(Message m);
  Message pop();  // blocks; throws PipelineAborted once aborted
  void abort();
  void reset();  // clears messages and the abort flag between steps

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  bool aborted_ = false;
};

}  // namespace ps
