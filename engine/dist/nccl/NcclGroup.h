#pragma once
// NCCL from the CUDA toolkit directly (Debian's LibTorch has no ProcessGroupNCCL): a communicator among some ranks
// of a run (the replicas of a stage for their gradient all-reduce; the two ends of one direction of a link for its
// payloads), its unique id passed through the run's rendezvous store. Torch-free and CUDA-header-free, so the engine
// includes it in any build; without NCCL at build time every call says so.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ps {

class NcclGroup {
 public:
  // `share` publishes rank 0's unique id and returns it on every rank (the cluster's store).
  using ShareId = std::function<std::vector<uint8_t>(const std::vector<uint8_t>& mine)>;
  // NCCL has no timeout of its own: the communicator is non-blocking and every wait gives up after `timeoutSeconds`
  // (parallel.timeout_s), aborting the communicator, as Gloo does when a peer stops.
  NcclGroup(int rank, int size, int device, const ShareId& share, double timeoutSeconds = 120);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  // The stream (a cudaStream_t) of the torch work that hands memory to this group: the calling stage's own stream.
  // The group's operations wait, on the device, for what was queued there before them. Null, the default, is the
  // legacy default stream.
  void setTorchStream(void* stream);

  // In place, on device memory of this group's device; returns when the result is there, throws after the timeout.
  void allReduceSum(float* deviceData, size_t count);

  // Point to point, for host bytes that should cross on the GPUs' fabric (NVLink, InfiniBand) rather than through a
  // socket. send() stages `count` bytes in device memory and returns once they are copied there: the transfer goes
  // on behind it, and the group keeps the staging buffer until it is done, so two ranks that send before they
  // receive do not wait for each other. receive() returns when `count` bytes from `peer` are in `out` and throws
  // after the timeout. Both ends must agree on `count` (the caller sends it ahead). Operations of one group run in
  // order on one stream, so a rank that sends and receives at once wants one group per direction.
  void send(const uint8_t* bytes, size_t count, int peer);
  void receive(uint8_t* out, size_t count, int peer);
  // The same from and into device memory of this group's device, with no staging: a payload's tail left on the GPU
  // that encoded it. sendDevice queues the send behind the work already on torch's stream (setTorchStream, where the
  // bytes were written) and returns; `keep` (the owner of the bytes) is held until the send is
  // done. receiveDevice returns when `count` bytes from `peer` are in `out`, throwing after the timeout; when it
  // fails, the group keeps `keep` (the owner of `out`), since an aborted receive may still write there. Memory the
  // device may still touch when the group ends is never given back (leaked, not freed under a running kernel).
  void sendDevice(const void* data, size_t count, int peer, std::shared_ptr<void> keep);
  void receiveDevice(void* out, size_t count, int peer, std::shared_ptr<void> keep = nullptr);

  // True when this build has NCCL and a CUDA device is visible; otherwise false with the reason.
  static bool available(std::string* why = nullptr);
  static bool built();
  // The PCI bus id of a CUDA device ("0000:3B:00.0"): one GPU whatever number CUDA_VISIBLE_DEVICES gives it in a
  // process. Empty without NCCL or when the device does not answer.
  static std::string busId(int device);

  // From where every rank runs (`where[rank]`: its machine and GPU, "host/0000:3B:00.0"; rank = replica * stages +
  // stage), why NCCL could not join some ranks that must talk (it refuses two ranks of one communicator on the same
  // GPU); empty when it can. placementProblem: the replicas of each stage (the all-reduce); linkPlacementProblem:
  // neighbouring stages of each replica (the payloads).
  static std::string placementProblem(int stages, const std::vector<std::string>& where);
  static std::string linkPlacementProblem(int stages, const std::vector<std::string>& where);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
