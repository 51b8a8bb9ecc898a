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
  // Copies onto the device for sends: a copy from pageable memory first waits for its stream to be idle, and on
  // `stream` that would mean waiting for earlier sends to be received, with no timeout.
  cudaStream_t staging = nullptr;
  int device = 0;
  std::chrono::duration<double> timeout{120};
  // Point to point: device buffers holding sends still under way (with the event that marks each done), spare
  // buffers for the next sends, and the one buffer receives land in.
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
    cudaEvent_t done = nullptr;
  };
  std::deque<Buffer> sending;
  std::vector<Buffer> spare;
  Buffer received;

  [[noreturn]] void giveUp(const std::string& what) {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    throw std::runtime_error("NCCL: " + what + " did not finish within " + std::to_string(int(timeout.count())) +
                             " s (parallel.timeout_s): another rank of the communicator stopped or hangs");
  }
  void enter() {
    checkCuda(cudaSetDevice(device), "cudaSetDevice");
    if (!comm) throw std::runtime_error("NCCL: the communicator was aborted after an earlier failure");
  }
  // Until the communicator is no longer busy with `what` (non-blocking mode).
  void settle(const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      checkNccl(ncclCommGetAsyncError(comm, &state), what.c_str());
      if (state != ncclInProgress) return checkNccl(state, what.c_str());
      if (std::chrono::steady_clock::now() > until) giveUp(what);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  void started(ncclResult_t r, const std::string& what) {
    if (r != ncclSuccess && r != ncclInProgress) checkNccl(r, what.c_str());
    settle("enqueueing " + what);
  }
  // Until the stream has run everything enqueued, polled, so a dead peer ends in an error rather than a hang.
  void drain(const std::string& what) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) checkCuda(e, what.c_str());
      ncclResult_t state = ncclSuccess;
      checkNccl(ncclCommGetAsyncError(comm, &state), what.c_str());
      if (state != ncclSuccess && state != ncclInProgress) checkNccl(state, what.c_str());
      if (std::chrono::steady_clock::now() > until) giveUp(what);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // Device memory for at least `count` bytes, reusing `b` when it is large enough.
  static void reserve(Buffer& b, size_t count) {
    if (b.capacity >= count) return;
    if (b.data) checkCuda(cudaFree(b.data), "cudaFree");
    b.data = nullptr;
    b.capacity = 0;
    checkCuda(cudaMalloc(&b.data, count), "cudaMalloc for a staged payload");
    b.capacity = count;
  }
  // A buffer for the next send: a finished send's when one is done, else a new one.
  Buffer takeSendBuffer(size_t count) {
    while (!sending.empty() && cudaEventQuery(sending.front().done) == cudaSuccess) {
      spare.push_back(sending.front());
      sending.pop_front();
    }
    Buffer b;
    if (!spare.empty()) {
      b = spare.back();
      spare.pop_back();
    } else {
      checkCuda(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming), "cudaEventCreate");
    }
    reserve(b, count);
    return b;
  }
  static void release(Buffer& b) {
    if (b.data) cudaFree(b.data);
    if (b.done) cudaEventDestroy(b.done);
    b = Buffer{};
  }
};

NcclGroup::NcclGroup(int rank, int size, int device, const ShareId& share, double timeoutSeconds)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->timeout = std::chrono::duration<double>(timeoutSeconds);
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
  const ncclResult_t started = ncclCommInitRankConfig(&impl_->comm, size, id, rank, &config);
  if (started != ncclInProgress) checkNccl(started, "ncclCommInitRankConfig");
  impl_->settle("joining the communicator");
  checkCuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  checkCuda(cudaStreamCreateWithFlags(&impl_->staging, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclGroup::~NcclGroup() {
  Impl& g = *impl_;
  cudaSetDevice(g.device);
  if (g.comm) {
    // Sends still under way finish when their receiver takes them; one whose receiver is gone never does, and
    // destroying the communicator would then wait for ever: abort it instead.
    const auto until =
        std::chrono::steady_clock::now() + std::min<std::chrono::duration<double>>(g.timeout, std::chrono::seconds(10));
    bool finished = false;
    while (!(finished = cudaStreamQuery(g.stream) == cudaSuccess) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (finished)
      ncclCommDestroy(g.comm);
    else
      ncclCommAbort(g.comm);
  }
  for (auto& b : g.sending) Impl::release(b);
  for (auto& b : g.spare) Impl::release(b);
  Impl::release(g.received);
  if (g.stream) cudaStreamDestroy(g.stream);
  if (g.staging) cudaStreamDestroy(g.staging);
}

void NcclGroup::allReduceSum(float* data, size_t count) {
  Impl& g = *impl_;
  g.enter();
  checkCuda(cudaDeviceSynchronize(), "waiting for the gradients");  // written on torch's stream
  g.started(ncclAllReduce(data, data, count, ncclFloat, ncclSum, g.comm, g.stream), "the all-reduce");
  g.drain("the all-reduce");
}

void NcclGroup::send(const uint8_t* bytes, size_t count, int peer) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  Impl::Buffer b = g.takeSendBuffer(count);
  // From pageable memory the copy returns once the bytes are staged, so `bytes` may go as soon as this returns; the
  // send waits for the copy on the device.
  cudaError_t e = cudaMemcpyAsync(b.data, bytes, count, cudaMemcpyHostToDevice, g.staging);
  if (e == cudaSuccess) e = cudaEventRecord(b.done, g.staging);  // the copy's end, until the send's is recorded
  if (e == cudaSuccess) e = cudaStreamWaitEvent(g.stream, b.done, 0);
  if (e != cudaSuccess) {
    g.spare.push_back(b);
    checkCuda(e, "staging a payload on the device");
  }
  g.sending.push_back(b);  // owned by the group from here on, whatever happens next
  const std::string what = "a send of " + std::to_string(count) + " bytes to rank " + std::to_string(peer);
  g.started(ncclSend(b.data, count, ncclUint8, peer, g.comm, g.stream), what);
  checkCuda(cudaEventRecord(g.sending.back().done, g.stream), "cudaEventRecord");
}

void NcclGroup::receive(uint8_t* out, size_t count, int peer) {
  if (count == 0) return;
  Impl& g = *impl_;
  g.enter();
  Impl::reserve(g.received, count);
  const std::string what = "a receive of " + std::to_string(count) + " bytes from rank " + std::to_string(peer);
  g.started(ncclRecv(g.received.data, count, ncclUint8, peer, g.comm, g.stream), what);
  g.drain(what);  // before the copy: one into pageable memory would block without a timeout
  checkCuda(cudaMemcpyAsync(out, g.received.data, count, cudaMemcpyDeviceToHost, g.stream), "fetching a payload");
  g.drain(what);
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
void NcclGroup::allReduceSum(float*, size_t) {}
void NcclGroup::send(const uint8_t*, size_t, int) {}
void NcclGroup::receive(uint8_t*, size_t, int) {}
bool NcclGroup::built() { return false; }
bool NcclGroup::available(std::string* why) {
  if (why) *why = "this build has no NCCL (the CUDA toolkit with nccl.h was not found)";
  return false;
}

#endif

std::string NcclGroup::placementProblem(int stages, int replicas, int gpus) {
  if (gpus <= 0) return "no CUDA device";
  for (int stage = 0; stage < stages; ++stage)
    for (int a = 0; a < replicas; ++a)
      for (int b = a + 1; b < replicas; ++b)
        if ((a * stages + stage) % gpus == (b * stages + stage) % gpus)
          return "replicas " + std::to_string(a) + " and " + std::to_string(b) + " of stage " + std::to_string(stage) +
                 " would share GPU " + std::to_string((a * stages + stage) % gpus) + " (" +
                 std::to_string(stages * replicas) + " ranks on " + std::to_string(gpus) +
                 " GPUs), and NCCL needs one GPU per rank of a communicator";
  return {};
}

std::string NcclGroup::linkPlacementProblem(int stages, const std::vector<std::string>& where) {
  if (stages < 2) return {};
  for (size_t rank = 0; rank + 1 < where.size(); ++rank) {
    const int stage = int(rank % size_t(stages));
    if (stage + 1 < stages && where[rank] == where[rank + 1])
      return "stages " + std::to_string(stage) + " and " + std::to_string(stage + 1) + " of replica " +
             std::to_string(rank / size_t(stages)) + " (ranks " + std::to_string(rank) + " and " +
             std::to_string(rank + 1) + ") would share " + where[rank] +
             ", and NCCL needs one GPU per rank of a communicator";
  }
  return {};
}

}  // namespace ps
