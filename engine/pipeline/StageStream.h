#pragma once
// A stage's stream. On a GPU each stage queues its work (its layers, its codecs' kernels, its copies) on a CUDA stream
// of its own, so that stages sharing a GPU overlap instead of queueing behind each other on one stream, and nothing in
// the hot path waits for the whole device: what crosses to another stage carries a fence, an event recorded on the
// sending stage's stream after the work that made it, which the receiving stage's stream waits for (on the device,
// the host goes on) before it reads what arrived. The host waits for a stage's stream once per step, at its end.
//
// On the CPU there are no streams, and the same calls only keep the books of the discipline, which the check mode
// (pipeline.stream_check) verifies on any device: every link send and receive runs on a thread in a stage's scope (on
// CUDA, with that stage's stream current), the sending stage's on one end and the receiving stage's on the other,
// and every message is read only after the receiving stage waited for its fence.
#include <torch/types.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace c10 {
struct Event;
struct StreamGuard;
}  // namespace c10

namespace ps {

// A break of the stream discipline, found by the check mode: names what was done, on which thread, and what the
// discipline wants instead.
class StreamDisciplineError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// What travels with a message between two stages of one process.
struct Fence {
  int producer = -1;                  // the stage that made the message; -1: none (from another process)
  std::shared_ptr<c10::Event> event;  // CUDA: recorded on the producer's stream after the message was made
  int waited_by = -1;                 // the stage whose stream waited for it
};

class StageStream {
 public:
  // `own`: a stage on a CUDA device takes a stream of its own from torch's pool (otherwise it stays on the device's
  // default stream, as torch's work does by default). `check`: the check mode.
  StageStream(int stage, const torch::Device& device, bool own, bool check);
  ~StageStream();
  StageStream(const StageStream&) = delete;
  StageStream& operator=(const StageStream&) = delete;

  int stage() const { return stage_; }
  const torch::Device& device() const { return device_; }
  bool checking() const { return check_; }
  // The CUDA stream (a cudaStream_t) this stage's work goes on, for code outside torch that must be ordered with it
  // (NCCL); null on the CPU, on the legacy default stream, or where this LibTorch cannot name its streams.
  void* cudaHandle() const;

  // For as long as it lives, the calling thread is this stage's: its stream is the thread's current one on the
  // stage's device, and current() answers this stage.
  class Scope {
   public:
    explicit Scope(const StageStream& stream);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const StageStream* previous_;
    std::unique_ptr<c10::StreamGuard> guard_;
  };
  // The stage the calling thread works for, or null (the main thread, a transport's thread).
  static const StageStream* current();

  // After the work that made what a message carries: its fence.
  Fence fence() const;
  // Before this stage reads what arrived with `fence`: its stream waits for the producer's (nothing to wait for on the
  // CPU), and `tensors` (device memory the producer allocated) are marked as used by the stream that will read them
  // (this stage's, or on another GPU the one torch copies them to this GPU on), so that the allocator does not hand
  // their memory out again before that stream is done with it.
  void wait(Fence& fence, const std::vector<torch::Tensor>& tensors = {}) const;
  // This stage's stream waits (on the device) for what the device's default stream has queued so far: the main
  // thread's work between steps (parameters placed, loaded or drawn anew). Nothing on the CPU or the default stream.
  void followDefault() const;
  // The host waits for everything queued on this stage's stream (the end of a step: the main thread reads the
  // stage's parameters and results next).
  void synchronize() const;

  // Check mode: throws StreamDisciplineError unless the calling thread is in `stage`'s scope and, on CUDA, that
  // stage's stream is the device's current one. `what` names the operation ("link 1 forward: send").
  static void require(int stage, const std::string& what);

 private:
  int stage_;
  torch::Device device_;
  bool check_;
  struct Streams;
  std::unique_ptr<Streams> streams_;  // CUDA only
};

}  // namespace ps
