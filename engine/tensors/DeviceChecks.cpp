#include "engine/tensors/DeviceChecks.h"

#include <torch/torch.h>

#include <atomic>
#include <stdexcept>

namespace ps {
namespace {

thread_local DeferredChecks* open = nullptr;
std::atomic<uint64_t> readAtOnce{0}, deferred{0};

}  // namespace

void requireOnDevice(const torch::Tensor& ok, std::function<void()> fail) {
  if (ok.numel() != 1 || ok.scalar_type() != torch::kBool)
    throw std::logic_error("requireOnDevice: the answer must be one boolean element");
  if (open) {
    open->checks_.push_back({ok.reshape({}), std::move(fail)});
    deferred.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  readAtOnce.fetch_add(1, std::memory_order_relaxed);
  if (!ok.item<bool>()) fail();
}

void requireOnHost(bool ok, std::function<void()> fail) {
  if (ok) return;
  if (!open) return fail();
  open->checks_.push_back({torch::tensor(false), std::move(fail)});
}

bool checksDeferred() {
  return open != nullptr;
}

DeviceCheckTally deviceCheckTally() {
  return {readAtOnce.load(std::memory_order_relaxed), deferred.load(std::memory_order_relaxed)};
}

DeferredChecks::DeferredChecks() {
  if (open) throw std::logic_error("DeferredChecks: one is already open on this thread");
  open = this;
}

DeferredChecks::~DeferredChecks() {
  open = nullptr;
}

torch::Tensor DeferredChecks::answers(const torch::Device& device) const {
  if (checks_.empty()) return {};
  std::vector<torch::Tensor> all;
  all.reserve(checks_.size());
  for (const Check& c : checks_) all.push_back(c.ok.to(device, torch::kDouble));
  return torch::stack(all);
}

void DeferredChecks::settle(const torch::Tensor& hostAnswers) {
  std::vector<Check> checks = std::move(checks_);
  checks_.clear();
  if (checks.empty()) return;
  if (!hostAnswers.defined() || hostAnswers.numel() != int64_t(checks.size()) || !hostAnswers.device().is_cpu())
    throw std::logic_error("DeferredChecks::settle: the answers read back do not match the pending checks");
  const auto read = hostAnswers.to(torch::kDouble).contiguous();
  const double* a = read.data_ptr<double>();
  for (size_t i = 0; i < checks.size(); ++i)
    if (a[i] == 0) checks[i].fail();
}

void DeferredChecks::settle() {
  if (checks_.empty()) return;
  settle(answers(checks_.front().ok.device()).to(torch::kCPU));
}

}  // namespace ps
