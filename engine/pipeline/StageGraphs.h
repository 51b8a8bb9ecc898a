#pragma once
// A stage's forward and backward passes replayed from CUDA graphs (pipeline.cuda_graphs).
//
// Each micro-batch slot of a step has its own pair of graphs per input shape, recorded the second time the slot runs
// with that shape (the first run is eager and warms up what a first call initialises lazily: library handles,
// workspaces, kernel choices). A pair keeps what the slot's forward pass saved for its backward pass in the pair's own
// memory, so the slots of a schedule with several micro-batches in flight never share it, as eager passes would not.
// Micro-batches far enough apart in the step's order share a slot (beginStep's reuse distance: under 1F1B as many
// slots as micro-batches can be in flight on the stage), and a slot replayed again before its backward ran is refused.
// The graphs enter autograd as one function of the stage's input and parameters: the loss after the last stage, the
// gradient that arrives from the next stage and the optimizer work as around the eager module, and the parameters'
// gradients are accumulated by autograd from copies (a graph's own gradient memory is overwritten by its next replay).
//
// A pass is replayed only where it is the computation that was recorded: an input of another shape gets pairs of its
// own (a slot records two shapes at most; a third runs eagerly), and parameters or buffers given new memory (a
// bottleneck's decoder re-drawn at a new width) drop every pair, which are recorded again. Where graphs cannot be had
// the stage runs eagerly and says why (reason()): on a CPU, in a build without CUDA graphs, with a bottleneck's
// encoder in the stage (any bottleneck's: its error measurement keeps what the encoder was fed, on the host side of
// each pass), or on the device's default stream.
//
// Memory: every slot keeps its pair's pool, and so its micro-batch's saved activations, for the whole run: as many as
// the schedule has micro-batches in flight on the stage (1F1B: the stages from it to the last; GPipe: all of a step's).
// Eager passes hold as many, but only while they are in flight.
//
// What is recorded is the passes' device work; their host code runs once, while recording. So the two passes do the
// same host work every time, with no branch on what exists yet (the incoming gradient's buffer is allocated by the
// forward pass, which launches nothing for it), a rule that a stand-in running them again at each replay (the CPU
// tests) could not check.
#include "engine/models/StageModule.h"
#include "engine/tensors/CudaGraphs.h"

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace ps {

enum class GraphMode { Off, Auto, On };
GraphMode graphModeOf(const std::string& name);  // "off", "auto", "on"

class StageGraphs {
 public:
  // Makes a pair for a slot; the default records CUDA graphs on `device`. Tests give a stand-in that runs the passes
  // again at each replay, which checks everything around the graphs on a CPU.
  using PairFactory = std::function<std::unique_ptr<GraphPair>()>;

  // `ownStream`: the stage queues its work on a stream of its own (pipeline.stage_streams), which recording needs.
  // Under GraphMode::On a stage that cannot be recorded is refused (ConfigError naming why).
  StageGraphs(std::shared_ptr<StageModule> module, torch::Device device, GraphMode mode, bool ownStream,
              PairFactory factory = nullptr);
  ~StageGraphs();

  // The stage's output for `input` as micro-batch `slot`: through the slot's graphs where they apply, else eagerly.
  // Its gradient flows back through autograd as the eager module's would. A recording that fails throws (in either
  // mode: what a failed recording took cannot be handed back to LibTorch's memory pool reliably), naming the setting.
  torch::Tensor forward(int slot, const torch::Tensor& input);
  // At the start of each step: the last step's passes are over (or were abandoned with it), and parameters may have
  // been given new memory since. `reuseDistance` (Schedule.h, of the step's order): micro-batches that far apart
  // share a slot; 0 gives each micro-batch a slot of its own.
  void beginStep(int reuseDistance = 0);
  // Slots (input shapes included) that hold recorded graphs.
  size_t recordedSlots() const;

  GraphMode mode() const { return mode_; }
  bool enabled() const { return reason_.empty(); }
  // Why the stage runs eagerly ("" while graphs are in use).
  const std::string& reason() const { return reason_; }
  // Passes so far: replayed from graphs, recorded, and run eagerly (warm-ups, a third shape, graphs not in use).
  int64_t replays() const { return replays_; }
  int64_t recordings() const { return recordings_; }
  int64_t eagerPasses() const { return eager_; }

  struct Slot;  // one slot's graphs for one input shape, and the tensors they read and write

 private:
  struct Key {
    int slot;
    std::vector<int64_t> shape;
    int dtype;
    bool inputGrad;
    bool operator<(const Key& o) const {
      return std::tie(slot, shape, dtype, inputGrad) < std::tie(o.slot, o.shape, o.dtype, o.inputGrad);
    }
  };
  // A slot records at most this many input shapes (a full micro-batch and an epoch's last); others run eagerly.
  static constexpr int kShapesPerSlot = 2;

  void followParameters();
  void dropSlots();
  void record(Slot& s, const torch::Tensor& input);

  std::shared_ptr<StageModule> module_;
  torch::Device device_;
  PairFactory factory_;
  std::vector<torch::Tensor> params_;
  std::vector<const void*> addresses_;  // of the parameters and buffers when the pairs were recorded
  std::map<Key, std::unique_ptr<Slot>> slots_;
  std::vector<std::unique_ptr<Slot>> retired_;  // dropped mid-step: a pass they replayed may still be in flight
  std::string reason_;
  GraphMode mode_ = GraphMode::Off;
  std::atomic<int> inFlight_{0};  // replayed passes whose backward has not run (it runs on autograd's thread)
  int reuse_ = 0;                 // micro-batches this far apart share a slot (0: none do)
  int64_t replays_ = 0, recordings_ = 0, eager_ = 0;
};

}  // namespace ps
