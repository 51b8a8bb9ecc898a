#include "engine/dist/nccl/NcclGroup.h"

#include <stdexcept>

#ifdef PIPESQUEEZE_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
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
};

NcclGroup::NcclGroup(int rank, int size, int device, const ShareId& share) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
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
  checkNccl(ncclCommInitRank(&impl_->comm, size, id, rank), "ncclCommInitRank");
  checkCuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclGroup::~NcclGroup() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclGroup::allReduceSum(float* data, size_t count) {
  checkCuda(cudaSetDevice(impl_->device), "cudaSetDevice");
  checkCuda(cudaDeviceSynchronize(), "waiting for the gradients");  // written on torch's stream
  checkNccl(ncclAllReduce(data, data, count, ncclFloat, ncclSum, impl_->comm, impl_->stream), "ncclAllReduce");
  checkCuda(cudaStreamSynchronize(impl_->stream), "waiting for the all-reduce");
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

NcclGroup::NcclGroup(int, int, int, const ShareId&) {
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

}  // namespace ps
