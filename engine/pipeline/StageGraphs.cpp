#include "engine/pipeline/StageGraphs.h"
#include "engine/errors/ConfigError.h"

#include <algorithm>
#include <stdexcept>

namespace ps {

GraphMode graphModeOf(const std::string& name) {
  if (name == "on") return GraphMode::On;
  if (name == "auto") return GraphMode::Auto;
  if (name == "off") return GraphMode::Off;
  throw ConfigError("pipeline.cuda_graphs must be auto, on or off, not '" + name + "'");
}

struct StageGraphs::Slot {
  std::unique_ptr<GraphPair> pair;  // null until recorded
  bool warmed = false;              // ran eagerly once with this shape
  bool inputGrad = false;           // the input needs a gradient (every stage but the first)
  torch::Tensor input, output, gradOutput;
  std::vector<torch::Tensor> grads;  // the input's (where it needs one), then each parameter's
  std::atomic<int>* inFlight = nullptr;
  std::atomic<bool> live{false};  // replayed forward, backward not yet: the pair's memory holds that micro-batch
};

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The recorded passes as one autograd function of the stage's input and parameters.
struct ReplayedPasses : torch::autograd::Function<ReplayedPasses> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, at::TensorList params,
                               StageGraphs::Slot* slot) {
    (void)params;  // inputs of the function so that autograd routes their gradients; the graphs read them in place
    ctx->saved_data["slot"] = int64_t(reinterpret_cast<intptr_t>(slot));
    if (slot->live.exchange(true))
      throw std::logic_error(
          "StageGraphs: a slot's graphs were replayed again before its backward pass ran; the "
          "micro-batches sharing it overlap in the schedule");
    slot->input.detach().copy_(input);
    slot->pair->replayForward();
    return slot->output.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    auto* slot = reinterpret_cast<StageGraphs::Slot*>(intptr_t(ctx->saved_data["slot"].toInt()));
    if (gradOutputs[0].defined())
      slot->gradOutput.copy_(gradOutputs[0]);
    else
      slot->gradOutput.zero_();
    slot->pair->replayBackward();
    --*slot->inFlight;
    variable_list out;
    size_t next = 0;
    if (slot->inputGrad)
      out.push_back(slot->grads[next++].detach());  // not copied: see below
    else
      out.push_back(torch::Tensor());
    // Copies: autograd may keep a gradient it is given as the parameter's .grad, which the next replay would overwrite.
    for (; next < slot->grads.size(); ++next) out.push_back(slot->grads[next].clone());
    out.push_back(torch::Tensor());  // the slot
    // Read out: the next micro-batch sharing the slot may replay it. The input's gradient above and the output the
    // forward pass returned are the pair's own memory, so they are safe only because the stage sends each on (a
    // codec's copy or encoding, on the stage's stream) before its next pass: nothing may keep them beyond that.
    slot->live = false;
    return out;
  }
};

std::string ineligible(const StageModule& module, const torch::Device& device, bool ownStream, bool standIn) {
  if (!device.is_cuda() && !standIn) return "the stage is on the CPU";
  if (!standIn && !recordsCudaGraphs()) return "this build's LibTorch has no CUDA library, so no CUDA graphs";
  if (module.encodes())
    return "the stage ends in a learned bottleneck's encoder, whose error is measured from what each pass fed it";
  if (!ownStream && !standIn) return "the stage runs on the device's default stream (pipeline.stage_streams=false)";
  return {};
}

}  // namespace

StageGraphs::StageGraphs(std::shared_ptr<StageModule> module, torch::Device device, GraphMode mode, bool ownStream,
                         PairFactory factory)
    : module_(std::move(module)), device_(device), factory_(std::move(factory)), mode_(mode) {
  if (mode == GraphMode::Off) {
    reason_ = "pipeline.cuda_graphs=off";
    return;
  }
  reason_ = ineligible(*module_, device_, ownStream, bool(factory_));
  if (!reason_.empty() && mode == GraphMode::On)
    throw ConfigError("pipeline.cuda_graphs=on, but " + reason_ + ": set it to auto to run such stages eagerly");
  if (!factory_) factory_ = [index = int(device_.index())] { return makeCudaGraphPair(index); };
  followParameters();  // the function's inputs from the first pass on, whether or not a step began
}

StageGraphs::~StageGraphs() = default;

void StageGraphs::beginStep(int reuseDistance) {
  inFlight_ = 0;     // the last step's autograd graphs, which named its slots, are gone with it
  retired_.clear();  // and with them the last passes of slots dropped during it
  for (auto& [key, slot] : slots_) slot->live = false;
  reuse_ = std::max(reuseDistance, 0);
  if (enabled()) followParameters();
}

size_t StageGraphs::recordedSlots() const {
  size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot->pair != nullptr;
  return n;
}

void StageGraphs::dropSlots() {
  for (auto& [key, slot] : slots_) retired_.push_back(std::move(slot));
  slots_.clear();
}

// Between steps (once a step, not per pass: walking the module is host work): parameters or buffers given new tensors
// or new memory drop every pair, whose graphs read and write the old.
void StageGraphs::followParameters() {
  std::vector<torch::Tensor> now = module_->parameters();
  std::vector<const void*> at;
  for (const auto& p : now) at.push_back(p.data_ptr());
  for (const auto& b : module_->buffers()) at.push_back(b.data_ptr());
  bool same = now.size() == params_.size() && at == addresses_;
  for (size_t i = 0; same && i < now.size(); ++i) same = now[i].is_same(params_[i]);
  if (same) return;
  dropSlots();
  params_ = std::move(now);
  addresses_ = std::move(at);
}

torch::Tensor StageGraphs::forward(int slotIndex, const torch::Tensor& input) {
  if (!enabled()) {
    ++eager_;
    return module_->forward(input);
  }
  if (reuse_ > 0) slotIndex %= reuse_;
  const Key key{slotIndex, input.sizes().vec(), int(input.scalar_type()), input.requires_grad()};
  auto found = slots_.find(key);
  if (found == slots_.end()) {
    int shapes = 0;
    for (const auto& [k, slot] : slots_) shapes += k.slot == slotIndex;
    if (shapes >= kShapesPerSlot) {
      ++eager_;  // a third shape in this slot: eagerly, rather than a third pair's memory
      return module_->forward(input);
    }
    found = slots_.emplace(key, std::make_unique<Slot>()).first;
    found->second->inFlight = &inFlight_;
  }
  Slot& s = *found->second;
  if (!s.pair) {
    if (!s.warmed) {
      s.warmed = true;
      ++eager_;  // the first run with this shape warms up
      return module_->forward(input);
    }
    try {
      record(s, input);
    } catch (const std::exception& e) {
      reason_ = std::string("recording failed: ") + e.what();
      dropSlots();
      throw std::runtime_error("recording a stage's passes as CUDA graphs failed (" + std::string(e.what()) +
                               "); set pipeline.cuda_graphs=off to run without them");
    }
  }
  ++replays_;
  ++inFlight_;
  return ReplayedPasses::apply(input, at::TensorList(params_), &s);
}

void StageGraphs::record(Slot& s, const torch::Tensor& input) {
  s.inputGrad = input.requires_grad();
  s.input = input.detach().clone();
  if (s.inputGrad) s.input.requires_grad_(true);
  std::vector<torch::Tensor> wrt;
  if (s.inputGrad) wrt.push_back(s.input);
  wrt.insert(wrt.end(), params_.begin(), params_.end());
  auto pair = factory_();
  if (!pair) throw std::runtime_error("this build records no CUDA graphs");
  pair->record(
      [&s, this] {
        torch::AutoGradMode withGrad(true);
        s.output = module_->forward(s.input);
        s.gradOutput = torch::empty_like(s.output);  // the backward pass's input: allocated, nothing launched
      },
      [&s, wrt] {
        auto g = torch::autograd::grad({s.output}, wrt, {s.gradOutput}, /*retain_graph=*/false,
                                       /*create_graph=*/false, /*allow_unused=*/true);
        for (size_t i = 0; i < g.size(); ++i)
          if (!g[i].defined()) g[i] = torch::zeros_like(wrt[i]);  // a parameter this stage's output does not use
        s.grads = std::move(g);
      });
  s.pair = std::move(pair);
  ++recordings_;
}

}  // namespace ps
