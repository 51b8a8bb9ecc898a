#pragma once
// The commands posted to a running session (from the GUI thread, a signal handler, another owner), taken once per
// step on the training thread: stop and pause/resume change the queue's state, settings come back in order for the
// session to apply. Single-process and multi-process runs take their turn the same way; in a multi-process run rank
// 0 takes it and sends the outcome to every rank.
#include "engine/session/Command.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

namespace ps {

class CommandQueue {
 public:
  void push(Command command);
  void requestStop() { stop_.store(true); }  // async-signal-safe
  // Also stop once *flag is true; the flag must outlive the queue's use.
  void stopWhen(const std::atomic<bool>* flag) { external_ = flag; }

  struct Turn {
    std::vector<Command> sets;  // in the order they were posted
    bool paused = false, stop = false;
    std::vector<Command::Kind> transitions;  // each Pause or Resume that changed the state, in order
  };
  // Takes everything posted since the last turn.
  Turn take();
  // What rank 0 decided, applied on another rank.
  void follow(bool stop, bool paused);
  bool stopRequested() const { return stop_.load(); }
  bool paused() const { return paused_; }

 private:
  std::mutex mutex_;
  std::deque<Command> pending_;
  std::atomic<bool> stop_{false};
  const std::atomic<bool>* external_ = nullptr;
  bool paused_ = false;
};

}  // namespace ps
