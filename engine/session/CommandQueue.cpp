#include "engine/session/CommandQueue.h"

namespace ps {

void CommandQueue::push(Command command) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back(std::move(command));
}

CommandQueue::Turn CommandQueue::take() {
  if (external_ && external_->load()) stop_ = true;
  std::deque<Command> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending.swap(pending_);
  }
  Turn t;
  for (auto& c : pending) {
    switch (c.kind) {
      case Command::Kind::Stop: stop_ = true; break;
      case Command::Kind::Pause:
      case Command::Kind::Resume:
        if (paused_ != (c.kind == Command::Kind::Pause)) t.transitions.push_back(c.kind);
        paused_ = c.kind == Command::Kind::Pause;
        break;
      case Command::Kind::Set: t.sets.push_back(std::move(c)); break;
    }
  }
  t.stop = stop_.load();
  t.paused = paused_;
  return t;
}

void CommandQueue::follow(bool stop, bool paused) {
  if (stop) stop_ = true;
  paused_ = paused;
}

}  // namespace ps
