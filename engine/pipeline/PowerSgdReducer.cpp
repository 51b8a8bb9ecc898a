#include "engine/pipeline/PowerSgdReducer.h"

#include "engine/compress/LowRank.h"
#include "engine/kernels/Random.h"

#include <chrono>

namespace ps {
namespace {

using Clock = std::chrono::steady_clock;

// Measures the arithmetic between two rounds.
struct Stopwatch {
  Clock::time_point t0 = Clock::now();
  double lap() {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - t0).count();
    t0 = now;
    return s;
  }
};

// All-reduces the tensors together through one contiguous buffer and divides by `divide` (1: the sum). The buffer
// is `staging`, grown when too small and reused every round.
void allReduceTogether(const std::vector<torch::Tensor>& parts, const PowerSgdReducer::AllReduce& allReduce,
                       double compute, double divide, torch::Tensor& staging) {
  int64_t n = 0;
  for (const auto& t : parts) n += t.numel();
  const auto options = parts.empty() ? torch::TensorOptions(torch::kFloat32) : parts.front().options();
  if (!staging.defined() || staging.numel() < n || staging.device() != options.device())
    staging = torch::empty({n}, options.dtype(torch::kFloat32));
  torch::Tensor buffer = staging.narrow(0, 0, n);
  int64_t into = 0;
  for (const auto& t : parts) {
    buffer.narrow(0, into, t.numel()).view(t.sizes()).copy_(t);
    into += t.numel();
  }
  allReduce(buffer.data_ptr<float>(), buffer.numel(), compute);
  if (divide != 1) buffer.div_(divide);
  int64_t at = 0;
  for (const auto& t : parts) {
    t.copy_(buffer.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

int64_t numelOf(const std::vector<torch::Tensor>& parts) {
  int64_t n = 0;
  for (const auto& t : parts) n += t.numel();
  return n;
}

}  // namespace

PowerSgdReducer::PowerSgdReducer(int64_t rank, int64_t startIter, double minRate, bool errorFeedback, uint64_t seed)
    : rank_(rank), startIter_(startIter), minRate_(minRate), errorFeedback_(errorFeedback), seed_(seed) {}

torch::Tensor PowerSgdReducer::initialQ(uint64_t seed, size_t tensor, int64_t m, int64_t r) {
  torch::Tensor q = torch::empty({m, r});
  for (int64_t c = 0; c < r; ++c)
    lowrank::drawNormalColumn(q, c, kernels::splitmix64(seed ^ (0x9051D000ULL + tensor)) + uint64_t(c));
  return q;
}

bool PowerSgdReducer::compresses(c10::IntArrayRef shape) const {
  const int64_t numel = c10::multiply_integers(shape), n = shape.empty() ? 1 : shape[0], m = n ? numel / n : 0;
  const int64_t r = rankOf(n, m);
  return r >= 1 && double((n + m) * r) * minRate_ < double(n * m);
}

int64_t PowerSgdReducer::reduce(std::vector<torch::Tensor>& grads, int replicas, const AllReduce& allReduce) {
  torch::NoGradGuard noGrad;
  Stopwatch watch;
  const double r = double(replicas);
  if (steps_++ < startIter_) {  // a plain all-reduce of everything, as the hook's first iterations
    allReduceTogether(grads, allReduce, watch.lap(), r, staging_);
    return numelOf(grads);
  }
  errors_.resize(grads.size());
  qs_.resize(grads.size());
  std::vector<torch::Tensor> inputs(grads.size());
  std::vector<torch::Tensor> whole, matrices, ps, qs;
  std::vector<size_t> low;  // the tensors that go through the low-rank rounds
  for (size_t i = 0; i < grads.size(); ++i) {
    torch::Tensor& g = grads[i];
    if (errorFeedback_) {
      if (!errors_[i].defined() || !errors_[i].sizes().equals(g.sizes())) errors_[i] = torch::zeros_like(g);
      g.add_(errors_[i]);
      inputs[i] = g.clone();
    }
    if (!compresses(g.sizes())) {
      whole.push_back(g);
      continue;
    }
    const int64_t n = g.dim() == 0 ? 1 : g.size(0), m = g.numel() / n, k = rankOf(n, m);
    torch::Tensor& q = qs_[i];
    if (!q.defined() || q.size(0) != m || q.size(1) != k) q = initialQ(seed_, i, m, k);  // the same everywhere
    lowrank::orthonormalizeColumns(q);  // the hook orthonormalises the warm start every step
    low.push_back(i);
    matrices.push_back(g.view({n, m}));
    ps.push_back(torch::mm(matrices.back(), q));
  }
  int64_t crossed = 0;
  if (!whole.empty()) {
    allReduceTogether(whole, allReduce, watch.lap(), r, staging_);
    crossed += numelOf(whole);
  }
  if (!low.empty()) {
    allReduceTogether(ps, allReduce, watch.lap(), 1, staging_);  // summed: orthonormalised next, so no division needed
    for (size_t j = 0; j < low.size(); ++j) {
      lowrank::orthonormalizeColumns(ps[j]);
      qs.push_back(torch::mm(matrices[j].t(), ps[j]).contiguous());
    }
    allReduceTogether(qs, allReduce, watch.lap(), r, staging_);
    for (size_t j = 0; j < low.size(); ++j) {
      torch::mm_out(matrices[j], ps[j], qs[j].t());  // the update, written over the gradient
      qs_[low[j]] = qs[j];
    }
    crossed += numelOf(ps) + numelOf(qs);
  }
  if (errorFeedback_)
    for (size_t i = 0; i < grads.size(); ++i) errors_[i] = inputs[i] - grads[i];
  return crossed;
}

}  // namespace ps
