#include "engine/pipeline/Channel.h"

#include <thread>

namespace ps {

void Channel::push(Message m) {
  if (remote_) {
    if (!remote_->takesTails()) m.payload.gather();  // host bytes, unless the end carries device memory
    return remote_->push(std::move(m));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(m));
  }
  ready_.notify_one();
}

Message Channel::pop(uint64_t limit) {
  if (remote_) return remote_->pop(limit);
  Message m;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return aborted_ || !queue_.empty(); });
    if (aborted_) throw PipelineAborted();
    m = std::move(queue_.front());
    queue_.pop_front();
  }
  if (m.deliver_at > std::chrono::steady_clock::now()) std::this_thread::sleep_until(m.deliver_at);
  return m;
}

void Channel::abort() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  ready_.notify_all();
}

void Channel::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
  aborted_ = false;
}

}  // namespace ps
