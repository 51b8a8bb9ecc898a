#include "engine/pipeline/StageStream.h"

#include "engine/tensors/CudaStreams.h"

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace ps {
namespace {
thread_local const StageStream* tCurrent = nullptr;
}  // namespace

// Device-generic (c10's stream and event interfaces): this compiles against any LibTorch, and the CUDA parts are
// reached only where LibTorch has registered a CUDA device at run time.
struct StageStream::Streams {
  explicit Streams(c10::Stream s) : stream(s) {}
  c10::Stream stream;
};

StageStream::StageStream(int stage, const torch::Device& device, bool own, bool check)
    : stage_(stage), device_(device), check_(check) {
  if (!device.is_cuda()) return;
  const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
  const c10::Device d(c10::DeviceType::CUDA, device.has_index() ? device.index() : c10::DeviceIndex(0));
  streams_ = std::make_unique<Streams>(own ? cuda.getStreamFromGlobalPool(d) : cuda.getDefaultStream(d));
}

StageStream::~StageStream() = default;

void* StageStream::cudaHandle() const {
  return streams_ ? cudaStreamOf(streams_->stream) : nullptr;
}

StageStream::Scope::Scope(const StageStream& stream) : previous_(tCurrent) {
  if (stream.streams_) guard_ = std::make_unique<c10::StreamGuard>(stream.streams_->stream);
  tCurrent = &stream;
}

StageStream::Scope::~Scope() {
  guard_.reset();
  tCurrent = previous_;
}

const StageStream* StageStream::current() {
  return tCurrent;
}

Fence StageStream::fence() const {
  Fence f;
  f.producer = stage_;
  if (streams_) {
    f.event = std::make_shared<c10::Event>(c10::DeviceType::CUDA);
    f.event->record(streams_->stream);
  }
  return f;
}

void StageStream::wait(Fence& fence, const std::vector<torch::Tensor>& tensors) const {
  if (streams_) {
    if (fence.event) fence.event->block(streams_->stream);
    const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
    for (const auto& t : tensors) {
      if (!t.defined() || !t.is_cuda() || !t.has_storage()) continue;
      // On this stage's device its stream reads it; on another GPU a copy to this one does, which torch queues on
      // this thread's current stream there.
      const c10::Stream user = t.device() == streams_->stream.device() ? streams_->stream : cuda.getStream(t.device());
      cuda.recordDataPtrOnStream(t.storage().data_ptr(), user);
    }
  }
  fence.waited_by = stage_;
}

void StageStream::followDefault() const {
  if (!streams_) return;
  const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
  const c10::Stream main = cuda.getDefaultStream(streams_->stream.device());
  if (main == streams_->stream) return;
  c10::Event done(c10::DeviceType::CUDA);
  done.record(main);
  done.block(streams_->stream);
}

void StageStream::synchronize() const {
  if (streams_) streams_->stream.synchronize();
}

void StageStream::require(int stage, const std::string& what) {
  const StageStream* s = tCurrent;
  if (!s)
    throw StreamDisciplineError(what +
                                ": called from a thread that runs no stage; a stage's tensors are touched only "
                                "by its own thread, on its own stream");
  if (s->stage_ != stage)
    throw StreamDisciplineError(what + ": called by stage " + std::to_string(s->stage_) + ", but it belongs to stage " +
                                std::to_string(stage) + "; each end of a link is its own stage's");
  if (s->streams_) {
    const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
    const c10::Stream now = cuda.getStream(s->streams_->stream.device());
    if (now != s->streams_->stream)
      throw StreamDisciplineError(what + ": stage " + std::to_string(stage) +
                                  "'s thread has another stream current than the stage's own; its work would not be "
                                  "ordered with the stage's");
  }
}

}  // namespace ps
