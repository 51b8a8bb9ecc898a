#include "engine/dist/nccl/NcclGroup.h"

#include <stdexcept>

#ifdef PIPESQUEEZE_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
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
  int device = 0;
  std::chrono::duration<double> timeout{120};

  [[noreturn]] void giveUp(const char* what) {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    throw std::runtime_error(std::string("NCCL: ") + what + " did not finish within " +
                             std::to_string(int(timeout.count())) +
                             " s (parallel.timeout_s): another replica stopped or hangs");
  }
  // Until the communicator is no longer busy with `what` (non-blocking mode).
  void settle(const char* what) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      checkNccl(ncclCommGetAsyncError(comm, &state), what);
      if (state != ncclInProgress) return checkNccl(state, what);
      if (std::chrono::steady_clock::now() > until) giveUp(what);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
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
  impl_->settle("joining the replicas' communicator");
  checkCuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclGroup::~NcclGroup() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclGroup::allReduceSum(float* data, size_t count) {
  checkCuda(cudaSetDevice(impl_->device), "cudaSetDevice");
  checkCuda(cudaDeviceSynchronize(), "waiting for the gradients");  // written on torch's stream
  if (!impl_->comm) throw std::runtime_error("NCCL: the communicator was aborted after an earlier failure");
  const ncclResult_t started = ncclAllReduce(data, data, count, ncclFloat, ncclSum, impl_->comm, impl_->stream);
  if (started != ncclInProgress) checkNccl(started, "ncclAllReduce");
  impl_->settle("enqueueing the all-reduce");
  const auto until = std::chrono::steady_clock::now() + impl_->timeout;
  for (;;) {  // the stream, polled, so a dead peer ends in an error rather than a hang
    const cudaError_t e = cudaStreamQuery(impl_->stream);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) checkCuda(e, "the all-reduce");
    ncclResult_t state = ncclSuccess;
    checkNccl(ncclCommGetAsyncError(impl_->comm, &state), "the all-reduce");
    if (state != ncclSuccess && state != ncclInProgress) checkNccl(state, "the all-reduce");
    if (std::chrono::steady_clock::now() > until) impl_->giveUp("the all-reduce");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
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

}  // namespace ps
