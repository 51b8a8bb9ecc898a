#include "engine/dist/nccl/NcclGroup.h"

#include <stdexcept>

#ifdef PIPESQUEEZE_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#endif

namespace ps {

#ifdef PIPESQUEEZE_HAVE_NCCL
namespace {

void checkCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}
void checkNccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
}

}  // namespace

struct NcclGroup::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaStream_t torch = cudaStreamLegacy;  // where torch queues the work that hands memory over (setTorchStream)
  // Copies onto the device for sends: a copy from pageable memory first waits for its stream to be idle, and on
  // `stream` that would mean waiting for earlier sends to be received, with no timeout.
  cudaStream_t staging = nullptr;
  cudaEvent_t inputsReady = nullptr;  // the all-reduce's input, written on torch's stream
  int device = 0;
  std::chrono::duration<double> timeout{120};
  // Point to point: device buffers holding sends still under way (with the event that marks each done), spare
  // buffers for the next sends, and the one buffer receives land in. Memory comes and goes in stream order
  // (cudaMallocAsync, cudaFreeAsync): cudaFree would wait for the whole device, sends of other communicators that
  // their receivers have not taken yet included, and two neighbours could then wait on each other for ever.
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
    cudaEvent_t done = nullptr;
  };
  std::deque<Buffer> sending;
  std::vector<Buffer> spare;
  Buffer received;
  // Sends straight from device memory, in stream order: each one's event and the owner of its bytes.
  struct DeviceSend {
    cudaEvent_t done = nullptr;
    std::shared_ptr<void> keep;
  };
  std::deque<DeviceSend> deviceSends;
  std::vector<cudaEvent_t> spareEvents;
  std::vector<std::shared_ptr<void>> failedReceives;  // owners of buffers an aborted receive may still write

  // NCCL wants a communicator aborted after any error; every later call then says so.
  [[noreturn]] void fail(const std::string& message) {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    throw std::runtime_error(message);
  }
  [[noreturn]] void giveUp(const std::string& what) {
    fail("NCCL: " + what + " did not finish within " + std::to_string(int(timeout.count())) +
         " s (parallel.timeout_s): another rank of the communicator stopped or hangs");
  }
  void check(ncclResult_t r, const std::string& what) {
    if (r != ncclSuccess && r != ncclInProgress) fail("NCCL: " + what + ": " + ncclGetErrorString(r));
  }
  void check(cudaError_t e, const std::string& what) {
    if (e != cudaSuccess) fail("CUDA: " + what + ": " + cudaGetErrorString(e));
  }
  void enter() {
    checkCuda(cudaSetDevice(device), "cudaSetDevice");
    if (!comm) throw std::runtime_error("NCCL: the communicator was aborted after an earlier failure");
  }
  ncclResult_t state(const std::string& what) {
    ncclResult_t s = ncclSuccess;
    check(ncclCommGetAsyncError(comm, &s), what);
    check(s, what);
    return s;
  }
  // Until the communicator is no longer busy with `what` (non-blocking mode).
  void settle(const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (state(what) == ncclInProgress) {
      if (std::chrono::steady_clock::now() > until) giveUp(what);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  void started(ncclResult_t r, const std::string& what) {
    check(r, what);
    settle("enqueueing " + what);
  }
  // Until the stream has run everything enqueued, polled, so a dead peer ends in an error rather than a hang.
  void drain(const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) check(e, what);
      state(what);
      if (std::chrono::steady_clock::now() > until) giveUp(what);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // A buffer for the next send: the smallest spare one that holds `count` bytes (finished sends become spare),
  // else a new one.
  Buffer takeSendBuffer(size_t count) {
    while (!sending.empty() && cudaEventQuery(sending.front().done) == cudaSuccess) {
      spare.push_back(sending.front());
      sending.pop_front();
    }
    auto best = spare.end();
    for (auto it = spare.begin(); it != spare.end(); ++it)
      if (it->capacity >= count && (best == spare.end() || it->capacity < best->capacity)) best = it;
    if (best != spare.end()) {
      Buffer b = *best;
      spare.erase(best);
      return b;
    }
    Buffer b;
    check(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming), "cudaEventCreate");
    const cudaError_t e = cudaMallocAsync(&b.data, count, staging);
    if (e != cudaSuccess) {
      cudaEventDestroy(b.done);
      check(e, "allocating " + std::to_string(count) + " bytes to stage a payload");
    }
    b.capacity = count;
    return b;
  }
  // Finished device sends give back their events and let go of their bytes.
  void reapDeviceSends() {
    while (!deviceSends.empty() && cudaEventQuery(deviceSends.front().done) == cudaSuccess) {
      spareEvents.push_back(deviceSends.front().done);
      deviceSends.pop_front();
    }
  }
  // An event for the next device send.
  cudaEvent_t takeEvent() {
    reapDeviceSends();
    if (!spareEvents.empty()) {
      const cudaEvent_t e = spareEvents.back();
      spareEvents.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  // The stream waits for what torch queued on its stream before it reads or writes memory torch handed over.
  void afterTorch(cudaEvent_t e) {
    check(cudaEventRecord(e, torch), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream, e, 0), "cudaStreamWaitEvent");
  }
  static void release(Buffer& b) {
    if (b.data) cudaFree(b.data);
    if (b.done) cudaEventDestroy(b.done);
    b = Buffer{};
  }
  // The communicator's end: finalized and destroyed once nothing is under way, else aborted (a send whose receiver
  // is gone never finishes, and destroying it would wait for ever), never waiting longer than a few seconds.
  void close() {
    if (!comm) return;
    const auto until =
        std::chrono::steady_clock::now() + std::min<std::chrono::duration<double>>(timeout, std::chrono::seconds(10));
    auto waitFor = [&](auto done) {
      while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return true;
    };
    bool clean = waitFor([&] { return cudaStreamQuery(stream) == cudaSuccess; });
    if (clean) {
      const ncclResult_t r = ncclCommFinalize(comm);
      clean = (r == ncclSuccess || r == ncclInProgress) && waitFor([&] {
                ncclResult_t s = ncclSuccess;
                return ncclCommGetAsyncError(comm, &s) != ncclSuccess || s != ncclInProgress;
              });
      ncclResult_t s = ncclSuccess;
      clean = clean && ncclCommGetAsyncError(comm, &s) == ncclSuccess && s == ncclSuccess;
    }
    if (clean)
      ncclCommDestroy(comm);
    else
      ncclCommAbort(comm);
    comm = nullptr;
  }
};

NcclGroup::NcclGroup(int rank, int size, int device, const ShareId& share, double timeoutSeconds)
    : impl_(std::make_unique<Impl>()) {
  Impl& g = *impl_;
  g.device = device;
  g.timeout = std::chrono::duration<double>(timeoutSeconds);
  checkCuda(cudaSetDevice(device), "cudaSetDevice");
  ncclUniqueId id;
  std::vector<uint8_t> mine;
  if (rank == 0) {
    checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    mine.assign(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof id);
  }
  const auto shared = share(mine);
  if (shared.size() != sizeof id)
    throw std::runtime_error("NCCL: the unique id from rank 0 has " + std::to_string(shared.size()) + " bytes, not " +
                             std::to_string(sizeof id));
  std::memcpy(&id, shared.data(), sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t started = ncclCommInitRankConfig(&g.comm, size, id, rank, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    if (g.comm) ncclCommAbort(g.comm);
    checkNccl(started, "ncclCommInitRankConfig");
  }
  g.settle("joining the communicator");  // aborts it on failure
  g.check(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  g.check(cudaStreamCreateWithFlags(&g.staging, cudaStreamNonBlocking), "cudaStreamCreate");
  g.check(cudaEventCreateWithFlags(&g.inputsReady, cudaEventDisableTiming), "cudaEventCreate");
}

NcclGroup::~NcclGroup() {
  Impl& g = *impl_;
  cudaSetDevice(g.device);
  g.close();
  for (auto& b : g.sending) Impl::release(b);
  for (auto& b : g.spare) Impl::release(b);
  Impl::release(g.received);
  // The bytes' owners go after the communicator, and only when nothing on the stream can touch them any more.
  if (cudaStreamQuery(g.stream) != cudaSuccess) {
    auto* leaked = new std::vector<std::shared_ptr<void>>(std::move(g.failedReceives));
    for (auto& d : g.deviceSends) leaked->push_back(std::move(d.keep));
  }
  for (auto& d : g.deviceSends) cudaEventDestroy(d.done);
  g.deviceSends.clear();
  g.failedReceives.clear();
  for (auto e : g.spareEvents) cudaEventDestroy(e);
  if (g.inputsReady) cudaEventDestroy(g.inputsReady);
  if (g.stream) cudaStreamDestroy(g.stream);
  if (g.staging) cudaStreamDestroy(g.staging);
}

void NcclGroup::setTorchStream(void* stream) {
  impl_->torch = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
}

void NcclGroup::allReduceSum(float* data, size_t count) {
  Impl& g = *impl_;
  g.enter();
  // The gradients are written on torch's stream (the stage's): the all-reduce waits for that stream alone, not for the
  // whole device, where sends of other communicators may wait for their receivers.
  g.afterTorch(g.inputsReady);
  g.started(ncclAllReduce(data, data, count, ncclFloat, ncclSum, g.comm, g.stream), "the all-reduce");
  g.drain("the all-reduce");
}

void NcclGroup::send(const uint8_t* bytes, size_t count, int peer) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  g.reapDeviceSends();
  Impl::Buffer b = g.takeSendBuffer(count);
  g.sending.push_back(b);  // owned by the group from here on, whatever happens next
  // From pageable memory the copy returns once the bytes are staged, so `bytes` may go as soon as this returns; the
  // send waits for the copy on the device. Until the send's end is recorded, the event marks the copy's.
  g.check(cudaMemcpyAsync(b.data, bytes, count, cudaMemcpyHostToDevice, g.staging), "staging a payload");
  g.check(cudaEventRecord(b.done, g.staging), "cudaEventRecord");
  g.check(cudaStreamWaitEvent(g.stream, b.done, 0), "cudaStreamWaitEvent");
  const std::string what = "a send of " + std::to_string(count) + " bytes to rank " + std::to_string(peer);
  g.started(ncclSend(b.data, count, ncclUint8, peer, g.comm, g.stream), what);
  g.check(cudaEventRecord(b.done, g.stream), "cudaEventRecord");
}

void NcclGroup::receive(uint8_t* out, size_t count, int peer) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  if (g.received.capacity < count) {  // the stream is idle here: the last receive drained it
    if (g.received.data) g.check(cudaFreeAsync(g.received.data, g.stream), "cudaFreeAsync");
    g.received = Impl::Buffer{};
    g.check(cudaMallocAsync(&g.received.data, count, g.stream), "allocating a payload's receive buffer");
    g.received.capacity = count;
  }
  const std::string what = "a receive of " + std::to_string(count) + " bytes from rank " + std::to_string(peer);
  g.started(ncclRecv(g.received.data, count, ncclUint8, peer, g.comm, g.stream), what);
  g.drain(what);  // before the copy: one into pageable memory would block without a timeout
  g.check(cudaMemcpyAsync(out, g.received.data, count, cudaMemcpyDeviceToHost, g.stream), "fetching a payload");
  g.drain(what);
}

void NcclGroup::sendDevice(const void* data, size_t count, int peer, std::shared_ptr<void> keep) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  g.deviceSends.push_back({g.takeEvent(), std::move(keep)});  // owned by the group from here on
  const cudaEvent_t done = g.deviceSends.back().done;
  g.afterTorch(done);  // until the send's end is recorded, the event marks torch's work
  const std::string what = "a send of " + std::to_string(count) + " device bytes to rank " + std::to_string(peer);
  g.started(ncclSend(data, count, ncclUint8, peer, g.comm, g.stream), what);
  g.check(cudaEventRecord(done, g.stream), "cudaEventRecord");
}

void NcclGroup::receiveDevice(void* out, size_t count, int peer, std::shared_ptr<void> keep) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  try {
    g.afterTorch(g.inputsReady);  // `out` may be memory torch's stream used until just now
    const std::string what =
        "a receive of " + std::to_string(count) + " device bytes from rank " + std::to_string(peer);
    g.started(ncclRecv(out, count, ncclUint8, peer, g.comm, g.stream), what);
    g.drain(what);
  } catch (...) {
    if (keep) g.failedReceives.push_back(std::move(keep));
    throw;
  }
}

std::string NcclGroup::busId(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess) return {};
  return id;
}

bool NcclGroup::built() { return true; }

bool NcclGroup::available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

#else

struct NcclGroup::Impl {};

NcclGroup::NcclGroup(int, int, int, const ShareId&, double) {
  throw std::runtime_error("this build has no NCCL: rebuild with the CUDA toolkit (nvcc and nccl.h) present");
}
NcclGroup::~NcclGroup() = default;
void NcclGroup::setTorchStream(void*) {}
void NcclGroup::allReduceSum(float*, size_t) {}
void NcclGroup::send(const uint8_t*, size_t, int) {}
void NcclGroup::receive(uint8_t*, size_t, int) {}
void NcclGroup::sendDevice(const void*, size_t, int, std::shared_ptr<void>) {}
void NcclGroup::receiveDevice(void*, size_t, int, std::shared_ptr<void>) {}
std::string NcclGroup::busId(int) {
  return {};
}
bool NcclGroup::built() { return false; }
bool NcclGroup::available(std::string* why) {
  if (why) *why = "this build has no NCCL (the CUDA toolkit with nccl.h was not found)";
  return false;
}

#endif

namespace {
std::string sharing(const std::string& who, size_t a, size_t b, const std::string& where) {
  return who + " (ranks " + std::to_string(a) + " and " + std::to_string(b) + ") would share " + where +
         ", and NCCL needs one GPU per rank of a communicator";
}
}  // namespace

std::string NcclGroup::placementProblem(int stages, const std::vector<std::string>& where) {
  const size_t s = size_t(std::max(stages, 1));
  for (size_t a = 0; a < where.size(); ++a)
    for (size_t b = a + s; b < where.size(); b += s)  // the same stage of a later replica
      if (where[a] == where[b])
        return sharing("replicas " + std::to_string(a / s) + " and " + std::to_string(b / s) + " of stage " +
                           std::to_string(a % s),
                       a, b, where[a]);
  return {};
}

std::string NcclGroup::linkPlacementProblem(int stages, const std::vector<std::string>& where) {
  if (stages < 2) return {};
  for (size_t rank = 0; rank + 1 < where.size(); ++rank) {
    const int stage = int(rank % size_t(stages));
    if (stage + 1 < stages && where[rank] == where[rank + 1])
      return sharing("stages " + std::to_string(stage) + " and " + std::to_string(stage + 1) + " of replica " +
                         std::to_string(rank / size_t(stages)),
                     rank, rank + 1, where[rank]);
  }
  return {};
}

}  // namespace ps
