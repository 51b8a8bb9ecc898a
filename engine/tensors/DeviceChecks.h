#pragma once
// Yes-or-no checks on values a device holds (a decoded payload is finite, a tensor to be sent holds no NaN), gathered
// and read together. On a GPU, reading one answer on the host waits for everything queued before it on the stream and
// leaves the device idle while the host catches up; a stage asks several such questions per message. While a
// DeferredChecks is open on a thread, that thread's answers stay where they were computed and are read in one
// transfer when it settles. A stage opens one for its step's passes and settles it before its optimizer step, so a
// failed check still stops the step before any parameter changes; until then the values flow on (a NaN stays a NaN,
// nothing reads out of bounds), and the first failed check is what the step reports.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ps {

// Requires `ok` (one boolean element, on any device) to be true, else calls `fail`, which throws the error that
// names what is wrong. Read now, or, while a DeferredChecks is open on this thread, when it settles; `fail` then
// runs later, so it must hold what it needs by value.
void requireOnDevice(const torch::Tensor& ok, std::function<void()> fail);

// A check the host has already answered (reading host memory waits for nothing): false calls `fail` now, or, while a
// DeferredChecks is open, when it settles, so that a stage reports its failed checks in the order they were made
// wherever they were answered.
void requireOnHost(bool ok, std::function<void()> fail);

// True while a DeferredChecks is open on the calling thread.
bool checksDeferred();

// How the process's checks were answered so far: read one by one as they were asked (each a wait for the device), or
// held for a DeferredChecks to read together.
struct DeviceCheckTally {
  uint64_t readAtOnce = 0, deferred = 0;
};
DeviceCheckTally deviceCheckTally();

class DeferredChecks {
 public:
  // Opens on the calling thread (one at a time: a second while one is open is a logic error).
  DeferredChecks();
  // Closes; checks not settled are dropped unread (a step that failed is abandoned anyway).
  ~DeferredChecks();
  DeferredChecks(const DeferredChecks&) = delete;
  DeferredChecks& operator=(const DeferredChecks&) = delete;

  size_t pending() const { return checks_.size(); }
  // The pending answers as a float64 vector (1: holds, 0: failed) on `device`, for a caller that reads other figures
  // in the same transfer (undefined when nothing is pending); hand what came back to settle(answers).
  torch::Tensor answers(const torch::Device& device) const;
  // Runs the first failed check's `fail` given the answers read back (on the CPU, as answers() made them), and clears
  // the pending checks either way.
  void settle(const torch::Tensor& hostAnswers);
  // Reads the pending answers (one transfer) and settles them.
  void settle();

 private:
  friend void requireOnDevice(const torch::Tensor&, std::function<void()>);
  friend void requireOnHost(bool, std::function<void()>);
  struct Check {
    torch::Tensor ok;
    std::function<void()> fail;
  };
  std::vector<Check> checks_;
};

}  // namespace ps
