#pragma once
// CUDA graphs as a pair: what a pipeline stage's forward pass launches and what its backward pass launches, each
// recorded once and replayed per micro-batch. Replaying a graph launches every kernel of the pass in one call, with
// no host work between them: a stage of small kernels (micro-batches of a few samples) then stops waiting on launches.
// Recording needs LibTorch's CUDA library; a build against a LibTorch without it makes no pairs (and has no CUDA
// tensors to record).
#include <functional>
#include <memory>

namespace ps {

class GraphPair {
 public:
  virtual ~GraphPair() = default;
  // Records `forward`, then `backward` into the same memory pool (it reads what the forward pass kept), both on the
  // calling thread's current stream, which must not be the device's default stream. Throws where recording fails (a
  // host synchronisation inside a pass, an operation that cannot be recorded): then nothing is left recorded.
  virtual void record(const std::function<void()>& forward, const std::function<void()>& backward) = 0;
  // Launches the recorded passes again, on the calling thread's current stream. The tensors the passes made while
  // recording hold the new results once the work is done; their memory is the graphs' own.
  virtual void replayForward() = 0;
  virtual void replayBackward() = 0;
};

// Whether this build records CUDA graphs (it was compiled against a LibTorch with CUDA).
bool recordsCudaGraphs();
// A pair recording on CUDA device `device`; null where this build records none.
std::unique_ptr<GraphPair> makeCudaGraphPair(int device);

}  // namespace ps
