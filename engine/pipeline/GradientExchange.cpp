#include "engine/pipeline/GradientExchange.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace ps {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

GradientExchange::GradientExchange(std::shared_ptr<Cluster> cluster, int stage, const CompressionOptions& options,
                                   uint64_t seed, LinkModel model, bool nccl)
    : cluster_(std::move(cluster)), stage_(stage), seed_(seed), model_(model), useNccl_(nccl) {
  setOptions(options);
}

GradientExchange::~GradientExchange() = default;

CodecContext GradientExchange::contextOf(int replica) const {
  CodecContext c;
  c.seed = seed_ ^ (0xD1B54A32D192ED03ULL * uint64_t(replica + 1));  // every replica draws its own numbers
  c.boundary = stage_;
  c.direction = int(Direction::Gradients);
  return c;
}

void GradientExchange::setOptions(const CompressionOptions& options) {
  const bool stateful = sender_ && (options_.feedback != "none" || options_.adapt == "gravac");
  options_ = options;
  sender_ = std::make_unique<Compensator>(options_, contextOf(cluster_->replica()), AqsgdOptions{});
  gravac_.reset();
  if (options_.adapt == "gravac") {
    gravac_ = std::make_unique<GravacCompressors>(options_, contextOf(cluster_->replica()));
    options_.k = gravac_->sentK();
  }
  receivers_.clear();
  for (int j = 0; j < cluster_->replicas(); ++j)
    receivers_.push_back(std::make_unique<Compensator>(options_, contextOf(j), AqsgdOptions{}));
  if (stateful) resets_.push_back("compensation state reset: the compressor changed to " + sender_->describe());
}

void GradientExchange::selectGravac(GravacSend send, double current) {
  if (!gravac_) throw std::logic_error("selectGravac on a gradient exchange that GraVAC does not adapt");
  gravac_->select(send, current);
  options_.k = gravac_->sentK();
}

void GradientExchange::reduce(const std::vector<torch::Tensor>& params, double& clock) {
  torch::NoGradGuard noGrad;
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  if (n == 0) return;
  if (!flat_.defined() || flat_.numel() != n) {
    flat_ = torch::empty({n}, torch::kFloat32);
    sum_ = torch::empty({n}, torch::kFloat32);
  }
  const bool dense = !gravac_ && sender_->lossless();
  const bool onDevice = useNccl_ && dense && params.front().device().is_cuda();
  int64_t at = 0;
  for (const auto& p : params) {
    if (onDevice) break;  // NCCL reduces the gradients where they are
    auto part = flat_.narrow(0, at, p.numel());
    if (p.grad().defined()) part.copy_(p.grad().reshape(-1));
    else part.zero_();
    at += p.numel();
  }
  const int replicas = cluster_->replicas();
  const double r = double(replicas);
  const auto ring = uint64_t(2.0 * (r - 1) / r * 4.0 * double(n));  // a dense float32 ring all-reduce, per replica
  torch::Tensor mean;
  if (dense) {
    auto clocks = cluster_->allGatherReplicas(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&clock),
                                                                   reinterpret_cast<uint8_t*>(&clock) + 8),
                                              64);
    double start = clock;
    for (const auto& c : clocks) {
      double v = 0;
      if (c.size() == 8) std::memcpy(&v, c.data(), 8);
      start = std::max(start, v);
    }
    const torch::Device device = params.front().device();
    if (onDevice) {
      if (!nccl_)
        nccl_ = std::make_unique<NcclGroup>(cluster_->replica(), replicas, device.index(),
                                            [&](const std::vector<uint8_t>& id) { return cluster_->shareAmongReplicas("nccl", id); },
                                            cluster_->options().timeout_s);
      std::vector<torch::Tensor> parts;
      for (const auto& p : params)
        parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}, p.options()));
      auto flat = torch::cat(parts).to(torch::kFloat32).contiguous();
      if (measureNorm_) normSquared_ += flat.square().sum().item<double>();
      nccl_->allReduceSum(flat.data_ptr<float>(), size_t(n));
      mean = flat.div_(r);
    } else {
      if (measureNorm_) normSquared_ += flat_.square().sum().item<double>();
      cluster_->allReduceReplicas(flat_.data_ptr<float>(), n);
      mean = flat_.div_(r);
    }
    const double modelled =
        2.0 * (r - 1) * (model_.latencySeconds() + model_.transferSeconds(uint64_t(4.0 * double(n) / r)));
    raw_ += ring;
    wire_ += ring;
    nonzeros_ += uint64_t(n);
    modelled_s_ += modelled;  // no codec: nothing counts as encode or decode time
    clock = start + modelled;
  } else {
    // Every parameter tensor is compressed on its own (its own K, its own error-feedback residual: the
    // compensators keep state per slot), as TopK-SGD implementations do, so layers with small gradients are not
    // starved by layers with large ones. Message: clock, count, then (length, payload) per tensor.
    const auto t0 = Clock::now();
    std::vector<uint8_t> message(12);
    uint64_t sent = 0;
    at = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const int64_t len = params[i].numel();
      MessageMeta slot;
      slot.slot = int(i);
      auto part = flat_.narrow(0, at, len).view(params[i].sizes());  // codecs see the tensor's shape (PowerSGD)
      Payload p = gravac_ ? gravac_->send(part, slot, report_) : sender_->send(part, slot, report_);
      if (!report_.reset.empty()) {
        resets_.push_back(std::move(report_.reset));
        report_.reset.clear();
      }
      if (measureNorm_) normSquared_ += part.square().sum().item<double>();
      const uint64_t size = p.size();
      const size_t where = message.size();
      message.resize(where + 8 + size);
      std::memcpy(message.data() + where, &size, 8);
      std::memcpy(message.data() + where + 8, p.bytes.data(), size);
      nonzeros_ += p.values;
      at += len;
    }
    sent = message.size();
    const double encode = since(t0);
    encode_s_ += encode;
    clock += encode;
    const uint32_t count = uint32_t(params.size());
    std::memcpy(message.data(), &clock, 8);
    std::memcpy(message.data() + 8, &count, 4);
    // A peer's message can be no larger than float32 values with 32-bit indices and headers for every tensor.
    auto all = cluster_->allGatherReplicas(message, uint64_t(8 * n) + 4096 * (uint64_t(count) + 1));
    const auto t1 = Clock::now();
    double start = clock;
    size_t largest = 0;
    sum_.zero_();
    for (int j = 0; j < replicas; ++j) {
      const auto& bytes = all[size_t(j)];
      const std::string who = cluster_->describe(cluster_->rankOf(stage_, j));
      auto bad = [&](const std::string& what) { return ClusterError(who + " sent malformed gradients: " + what); };
      if (bytes.size() < 12) throw bad("a message of " + std::to_string(bytes.size()) + " bytes");
      double theirs = 0;
      uint32_t tensors = 0;
      std::memcpy(&theirs, bytes.data(), 8);
      std::memcpy(&tensors, bytes.data() + 8, 4);
      if (tensors != count)
        throw bad(std::to_string(tensors) + " tensors; stage " + std::to_string(stage_) + " has " + std::to_string(count));
      if (std::isfinite(theirs)) start = std::max(start, theirs);
      largest = std::max(largest, bytes.size());
      size_t offset = 12;
      at = 0;
      for (size_t i = 0; i < params.size(); ++i) {
        uint64_t size = 0;
        if (bytes.size() - offset < 8) throw bad("tensor " + std::to_string(i) + " runs past the end of the message");
        std::memcpy(&size, bytes.data() + offset, 8);
        offset += 8;
        if (size > bytes.size() - offset) throw bad("tensor " + std::to_string(i) + " runs past the end of the message");
        Payload p;
        p.bytes.assign(bytes.begin() + std::ptrdiff_t(offset), bytes.begin() + std::ptrdiff_t(offset + size));
        offset += size;
        MessageMeta slot;
        slot.slot = int(i);
        torch::Tensor d;
        try {
          d = receivers_[size_t(j)]->receive(p, torch::kCPU, slot);
        } catch (const PayloadError& e) {
          throw bad(e.what());
        }
        const int64_t len = params[i].numel();
        if (d.numel() != len)
          throw bad("tensor " + std::to_string(i) + " has " + std::to_string(d.numel()) + " elements, not " +
                    std::to_string(len));
        sum_.narrow(0, at, len).add_(d.reshape(-1).to(torch::kFloat32));
        at += len;
      }
      if (offset != bytes.size()) throw bad(std::to_string(bytes.size() - offset) + " trailing bytes");
    }
    mean = sum_.div_(r);
    const double decode = since(t1);
    const double modelled = (r - 1) * model_.messageSeconds(largest);
    raw_ += ring;
    wire_ += uint64_t(replicas - 1) * sent;
    modelled_s_ += modelled;
    decode_s_ += decode;
    clock = start + modelled + decode;
  }
  elements_ += uint64_t(n);
  messages_ += 1;
  at = 0;
  for (const auto& p : params) {
    auto part = mean.narrow(0, at, p.numel()).view(p.sizes());
    if (p.grad().defined()) p.mutable_grad().copy_(part);
    else p.mutable_grad() = part.to(p.device()).clone();
    at += p.numel();
  }
}

LinkTraffic GradientExchange::takeTraffic() {
  LinkTraffic t;
  t.boundary = stage_;
  t.direction = Direction::Gradients;
  t.raw_bytes = raw_;
  t.wire_bytes = wire_;
  t.elements = elements_;
  t.nonzeros = nonzeros_;
  t.messages = messages_;
  t.encode_s = encode_s_;
  t.decode_s = decode_s_;
  t.modelled_s = modelled_s_;
  t.setErrorSums(report_.err_num, report_.err_den, report_.comp_num, report_.comp_den);
  t.method = describe();
  if (gravac_) gravac_->report(t);
  if (measureNorm_) t.norm = std::sqrt(normSquared_);
  normSquared_ = 0;
  t.resets = std::move(resets_);
  resets_.clear();
  raw_ = wire_ = elements_ = nonzeros_ = 0;
  messages_ = 0;
  encode_s_ = decode_s_ = modelled_s_ = 0;
  report_ = SendReport{};
  return t;
}

}  // namespace ps
