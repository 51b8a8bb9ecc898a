#include "engine/pipeline/GradientExchange.h"

#include "engine/tensors/CudaStreams.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace ps {
namespace {
using Clock = TraceClock;
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

// PowerSGD with error feedback (or none) runs as PyTorch's hook: all-reduces of shared factors.
bool GradientExchange::allReducesLowRank(const CompressionOptions& o) {
  return o.method == "powersgd" && (o.feedback == "ef" || o.feedback == "none") && !o.adaptsWithOwnCompressors();
}

void GradientExchange::setOptions(const CompressionOptions& options) {
  const bool lowRank = allReducesLowRank(options);
  const int64_t rank = lowRank ? options.value("rank").get<int64_t>() : 0;
  const int64_t startIter = lowRank ? options.value("start_iter").get<int64_t>() : 0;
  const double minRate = lowRank ? options.value("min_rate").get<double>() : 0;
  if (sender_ && options.keepsCompensationOf(options_) && lowRank == bool(lowRank_)) {
    // A new K, bits or rank: every end keeps its state.
    sender_->retarget(options);
    for (auto& r : receivers_) r->retarget(options);
    options_ = options;
    if (lowRank_) lowRank_->configure(rank, startIter, minRate);
    return;
  }
  lowRank_.reset();
  if (lowRank)
    lowRank_ = std::make_unique<PowerSgdReducer>(rank, startIter, minRate, options.feedback == "ef",
                                                 seed_ ^ 0x9051D5EEDULL);
  const bool stateful = sender_ && options_.holdsState();
  options_ = options;
  sender_ = std::make_unique<Compensator>(options_, contextOf(cluster_->replica()), AqsgdOptions{});
  adaptive_ = makeAdaptiveSender(options_, contextOf(cluster_->replica()));
  if (adaptive_) options_.k = adaptive_->sentK();
  receivers_.clear();
  for (int j = 0; j < cluster_->replicas(); ++j)
    receivers_.push_back(std::make_unique<Compensator>(options_, contextOf(j), AqsgdOptions{}));
  if (stateful) resets_.push_back(compressorChangedReset(describe()));
}

void GradientExchange::applyDecision(const AdaptDecision& decision) {
  if (!adaptive_)
    throw std::logic_error(
        "a payload selection for a gradient exchange whose controller has no compressors of its own");
  adaptive_->apply(decision);
  options_.k = adaptive_->sentK();
}

void GradientExchange::reduce(const std::vector<torch::Tensor>& params, double& clock, std::vector<TraceEvent>* trace) {
  torch::NoGradGuard noGrad;
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  if (n == 0) return;
  const bool dense = !adaptive_ && !lowRank_ && sender_->lossless();
  const bool onDevice = useNccl_ && dense && params.front().device().is_cuda();
  if (!onDevice) gatherGradients(params, n);  // NCCL reduces the gradients where they are
  raw_ += ringBytes(n);
  elements_ += uint64_t(n);
  messages_ += 1;
  scatterMean(params, lowRank_ ? reduceLowRank(params, clock, trace)
                      : dense  ? reduceDense(params, n, onDevice, clock, trace)
                               : reduceCompressed(params, n, clock, trace));
}

double GradientExchange::slowestClock(double clock) const {
  const auto clocks = cluster_->allGatherReplicas(
      std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&clock), reinterpret_cast<uint8_t*>(&clock) + 8), 64);
  double start = clock;
  for (const auto& c : clocks) {
    double v = 0;
    if (c.size() == 8) std::memcpy(&v, c.data(), 8);
    if (std::isfinite(v)) start = std::max(start, v);
  }
  return start;
}

double GradientExchange::ringSeconds(int64_t n) const {
  return model_.ringAllReduceSeconds(uint64_t(n), cluster_->replicas());
}

// Every round is a ring all-reduce that starts when the slowest replica has done its arithmetic; the trace keeps
// each round with that arithmetic, so a saved run replays the same clock.
torch::Tensor GradientExchange::reduceLowRank(const std::vector<torch::Tensor>& params, double& clock,
                                              std::vector<TraceEvent>* trace) {
  std::vector<torch::Tensor> grads;
  int64_t at = 0;
  for (const auto& p : params) {
    grads.push_back(flat_.narrow(0, at, p.numel()).view(p.sizes()));
    at += p.numel();
  }
  if (measureNorm_) normSquared_ += flat_.square().sum().item<double>();
  if (!local_.defined() || local_.numel() != flat_.numel()) local_ = torch::empty_like(flat_);
  const torch::Tensor& local = local_.copy_(flat_);  // this replica's gradient, for the error of the update
  const int64_t crossed =
      lowRank_->reduce(grads, cluster_->replicas(), [&](float* values, int64_t count, double compute) {
        const double work = tracedSeconds(compute);
        encode_s_ += work;
        clock += work;
        const double start = slowestClock(clock), modelled = ringSeconds(count);
        cluster_->allReduceReplicas(values, count);
        wire_ += ringBytes(count);
        modelled_s_ += modelled;
        clock = start + modelled;
        if (trace) trace->push_back({TraceEvent::ExchangeDense, work, 0, uint64_t(count)});
      });
  nonzeros_ += uint64_t(crossed);
  const double err = (flat_ - local).square().sum().item<double>(), norm = local.square().sum().item<double>();
  report_.err_num += err, report_.err_den += norm, report_.comp_num += err, report_.comp_den += norm;
  return flat_;  // the replicas' update
}

uint64_t GradientExchange::ringBytes(int64_t n) const {
  const double r = double(cluster_->replicas());
  return uint64_t(2.0 * (r - 1) / r * 4.0 * double(n));  // a dense float32 ring all-reduce, per replica
}

void GradientExchange::gatherGradients(const std::vector<torch::Tensor>& params, int64_t n) {
  if (!flat_.defined() || flat_.numel() != n) {
    flat_ = torch::empty({n}, torch::kFloat32);
    sum_ = torch::empty({n}, torch::kFloat32);
  }
  int64_t at = 0;
  for (const auto& p : params) {
    auto part = flat_.narrow(0, at, p.numel());
    if (p.grad().defined()) part.copy_(p.grad().reshape(-1));
    else part.zero_();
    at += p.numel();
  }
}

void GradientExchange::scatterMean(const std::vector<torch::Tensor>& params, const torch::Tensor& mean) {
  int64_t at = 0;
  for (const auto& p : params) {
    auto part = mean.narrow(0, at, p.numel()).view(p.sizes());
    if (p.grad().defined()) p.mutable_grad().copy_(part);
    else p.mutable_grad() = part.to(p.device()).clone();
    at += p.numel();
  }
}

// The modelled time here and in reduceCompressed() is the link model's (engine/core/LinkModel.h), which a saved
// run's replay calls too.
torch::Tensor GradientExchange::reduceDense(const std::vector<torch::Tensor>& params, int64_t n, bool onDevice,
                                            double& clock, std::vector<TraceEvent>* trace) {
  const double start = slowestClock(clock);  // the all-reduce starts when the slowest replica is ready
  const int replicas = cluster_->replicas();
  const double r = double(replicas);
  torch::Tensor mean;
  if (onDevice) {
    if (!nccl_)
      nccl_ = std::make_unique<NcclGroup>(
          cluster_->replica(), replicas, params.front().device().index(),
          [&](const std::vector<uint8_t>& id) { return cluster_->shareAmongReplicas("nccl", id); },
          cluster_->options().timeout_s);
    nccl_->setTorchStream(currentCudaStream(params.front().device().index()));  // this thread's: the stage's
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
  const double modelled = ringSeconds(n);
  wire_ += ringBytes(n);
  nonzeros_ += uint64_t(n);
  modelled_s_ += modelled;  // no codec: nothing counts as encode or decode time
  clock = start + modelled;
  if (trace) trace->push_back({TraceEvent::ExchangeDense, 0, 0, uint64_t(n)});
  return mean;
}

// Every parameter tensor is compressed on its own (its own K, its own error-feedback residual: the compensators
// keep state per slot), as TopK-SGD implementations do, so layers with small gradients are not starved by layers
// with large ones.
void GradientExchange::encodeAll(const std::vector<torch::Tensor>& params, GradientMessageWriter& message) {
  int64_t at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    MessageMeta slot;
    slot.slot = int(i);
    auto part = flat_.narrow(0, at, params[i].numel()).view(params[i].sizes());  // codecs see the shape (PowerSGD)
    Payload p = adaptive_ ? adaptive_->send(part, slot, report_) : sender_->send(part, slot, report_);
    if (!report_.reset.empty()) {
      resets_.push_back(std::move(report_.reset));
      report_.reset.clear();
    }
    if (measureNorm_) normSquared_ += part.square().sum().item<double>();
    message.add(p.bytes);
    nonzeros_ += p.values;
    at += params[i].numel();
  }
}

void GradientExchange::decodeFrom(int replica, const std::vector<uint8_t>& bytes,
                                  const std::vector<torch::Tensor>& params, double& start) {
  const std::string who = cluster_->describe(cluster_->rankOf(stage_, replica));
  auto bad = [&](const std::string& what) { return ClusterError(who + " sent malformed gradients: " + what); };
  GradientMessage message;
  try {
    message = GradientMessage::parse(bytes, uint32_t(params.size()));
  } catch (const GradientMessageError& e) {
    throw bad(std::string(e.what()) + " (stage " + std::to_string(stage_) + " has " + std::to_string(params.size()) +
              " parameter tensors)");
  }
  if (std::isfinite(message.clock)) start = std::max(start, message.clock);
  int64_t at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& span = message.tensors[i];
    Payload p;
    p.bytes.assign(span.data, span.data + span.size);
    MessageMeta meta;
    meta.slot = int(i);
    const auto shape = params[i].sizes().vec();
    meta.shape = &shape;  // anything else is refused before it is decoded
    torch::Tensor d;
    try {
      d = receivers_[size_t(replica)]->receive(p, torch::kCPU, meta);
    } catch (const PayloadError& e) {
      throw bad("tensor " + std::to_string(i) + ": " + e.what());
    }
    sum_.narrow(0, at, params[i].numel()).add_(d.reshape(-1).to(torch::kFloat32));
    at += params[i].numel();
  }
}

torch::Tensor GradientExchange::reduceCompressed(const std::vector<torch::Tensor>& params, int64_t n, double& clock,
                                                 std::vector<TraceEvent>* trace) {
  const TraceStopwatch t0;
  GradientMessageWriter writer;
  encodeAll(params, writer);
  const double encode = t0.seconds();
  encode_s_ += encode;
  clock += encode;
  const auto message = writer.finish(clock);  // stamped with the clock once encoding is done
  const uint64_t sent = message.size();
  const auto all = cluster_->allGatherReplicas(message, GradientMessage::maxBytes(uint64_t(n), uint32_t(params.size())));
  const TraceStopwatch t1;
  double start = clock;
  size_t largest = 0;
  sum_.zero_();
  const int replicas = cluster_->replicas();
  for (int j = 0; j < replicas; ++j) {
    decodeFrom(j, all[size_t(j)], params, start);
    largest = std::max(largest, all[size_t(j)].size());
  }
  const double r = double(replicas);
  auto mean = sum_.div_(r);
  const double decode = t1.seconds();
  const double modelled = model_.allGatherSeconds(largest, replicas);
  wire_ += uint64_t(replicas - 1) * sent;
  modelled_s_ += modelled;
  decode_s_ += decode;
  clock = start + modelled + decode;
  if (trace) trace->push_back({TraceEvent::ExchangeCompressed, encode, decode, sent});
  return mean;
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
  if (adaptive_) adaptive_->report(t);
  if (measureNorm_) t.measures[adapt_measure::kSquaredNorm] = normSquared_;
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
