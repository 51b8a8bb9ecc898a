#pragma once
// PowerSGD between data-parallel replicas as PyTorch's DDP communication hook runs it (powerSGD_hook): the replicas
// share one low-rank subspace instead of each sending its own factors.
//   - The first `start_iter` steps are a plain all-reduce of the gradients (no error feedback yet).
//   - Then, per step: every gradient plus its replica's residual is M (viewed as shape[0] x rest). Tensors that
//     rank r would not compress by `min_rate` (biases, small layers) are all-reduced whole. For the others, with the
//     shared warm-started Q (orthonormalised; drawn from the run's seed at the first compressed step, the same on
//     every replica): P = M Q, all-reduce P, orthonormalise P, Q = M^T P, all-reduce Q and divide by the replicas;
//     the update is P Q^T, the same on every replica, and Q is kept as the next step's start.
//   - With error feedback the residual is M minus the update, for every tensor (so the whole-tensor ones keep their
//     distance to the mean, as the hook does).
// Three all-reduces a step (uncompressed tensors, P, Q), each of a size independent of the replica count.
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace ps {

class PowerSgdReducer {
 public:
  // Sums `n` floats over the replicas, in place. `compute`: the seconds of arithmetic this replica spent since the
  // last round (the caller's clock adds them before the round).
  using AllReduce = std::function<void(float* values, int64_t n, double compute)>;

  PowerSgdReducer(int64_t rank, int64_t startIter, double minRate, bool errorFeedback, uint64_t seed);

  // Replaces every gradient (float32, contiguous, on the CPU) with the replicas' update. Returns the values that
  // crossed in all the rounds.
  int64_t reduce(std::vector<torch::Tensor>& grads, int replicas, const AllReduce& allReduce);

  // A new rank or schedule between steps: the residuals stay; a warm start of another rank is drawn afresh.
  void configure(int64_t rank, int64_t startIter, double minRate) {
    rank_ = rank, startIter_ = startIter, minRate_ = minRate;
  }
  // Whether a tensor of this shape goes through the low-rank rounds once PowerSGD has started.
  bool compresses(c10::IntArrayRef shape) const;
  int64_t steps() const { return steps_; }
  const torch::Tensor& q(size_t tensor) const { return qs_.at(tensor); }  // the warm start of a tensor (m x r)
  // The Q a tensor starts from at the first compressed step: standard normal draws keyed by the seed and the
  // tensor's index, so every replica draws the same (PyTorch seeds a shared generator for the same purpose).
  static torch::Tensor initialQ(uint64_t seed, size_t tensor, int64_t m, int64_t r);

 private:
  int64_t rankOf(int64_t n, int64_t m) const { return std::min({rank_, n, m}); }

  int64_t rank_, startIter_;
  double minRate_;
  bool errorFeedback_;
  uint64_t seed_;
  int64_t steps_ = 0;
  std::vector<torch::Tensor> errors_, qs_;  // per parameter tensor
  torch::Tensor staging_;                   // the all-reduce's buffer, reused every round
};

}  // namespace ps
