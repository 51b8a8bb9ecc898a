#include "engine/tensors/CudaGraphs.h"

// Defined (by engine/CMakeLists.txt, for this file alone) where LibTorch carries its CUDA library.
#ifdef PIPESQUEEZE_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/version.h>

#include <stdexcept>
#include <utility>
#endif

namespace ps {

#ifdef PIPESQUEEZE_TORCH_CUDA
namespace {

class CudaGraphPair final : public GraphPair {
 public:
  explicit CudaGraphPair(int device) : device_(c10::DeviceIndex(device)) {}

  void record(const std::function<void()>& forward, const std::function<void()>& backward) override {
    const c10::cuda::CUDAGuard onDevice(device_);
    if (c10::cuda::getCurrentCUDAStream(device_) == c10::cuda::getDefaultCUDAStream(device_))
      throw std::runtime_error("a CUDA graph is recorded on a stream of the stage's own, not the default stream");
    auto f = std::make_unique<at::cuda::CUDAGraph>();
    auto b = std::make_unique<at::cuda::CUDAGraph>();
    recordPass(*f, Pool{0, 0}, forward);  // a pool of its own
    recordPass(*b, f->pool(), backward);  // the forward pass's: it reads what that pass kept
    forward_ = std::move(f);
    backward_ = std::move(b);
  }

  void replayForward() override { forward_->replay(); }
  void replayBackward() override { backward_->replay(); }

 private:
  using Pool = decltype(std::declval<at::cuda::CUDAGraph&>().pool());

  static void recordPass(at::cuda::CUDAGraph& graph, Pool pool, const std::function<void()>& pass) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    // Thread-local: the other stages go on launching and allocating on their own threads while this one records.
    graph.capture_begin(pool, cudaStreamCaptureModeThreadLocal);
#else
    graph.capture_begin(pool);
#endif
    try {
      pass();
    } catch (...) {
      endAbandoned(graph);
      throw;
    }
    graph.capture_end();
  }

  // A pass that threw while recording leaves the stream capturing: ending the capture returns the stream to normal
  // work (the run then stops; what the allocator set aside for the capture is not reliably handed back). Its own
  // failure adds nothing to the pass's.
  static void endAbandoned(at::cuda::CUDAGraph& graph) noexcept {
    try {
      graph.capture_end();
    } catch (...) {
    }
  }

  c10::DeviceIndex device_;
  std::unique_ptr<at::cuda::CUDAGraph> forward_, backward_;
};

}  // namespace

bool recordsCudaGraphs() {
  return true;
}
std::unique_ptr<GraphPair> makeCudaGraphPair(int device) {
  return std::make_unique<CudaGraphPair>(device);
}
#else
bool recordsCudaGraphs() {
  return false;
}
std::unique_ptr<GraphPair> makeCudaGraphPair(int) {
  return nullptr;
}
#endif

}  // namespace ps
