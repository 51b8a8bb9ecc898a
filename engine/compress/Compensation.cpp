#include "engine/compress/Compensation.h"

#include "engine/compress/IdentityCodec.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

#include <cmath>

namespace ps {
namespace {

double sq(const torch::Tensor& t) { return t.pow(2).sum().item<double>(); }

}  // namespace

Compensator::Compensator(const CompressionOptions& o, const CodecContext& c, const AqsgdOptions& aqsgd)
    : options_(o), context_(c), feedback_(o.feedback), codec_(makeCodec(o, c)), identity_(std::make_unique<IdentityCodec>()),
      aqsgd_(aqsgd), coinSeed_(kernels::splitmix64(c.stream() ^ 0xC0C0ULL)) {}

std::string Compensator::describe() const {
  return feedback_ == "none" ? codec_->describe() : codec_->describe() + " + " + feedback_;
}

void Compensator::retarget(const CompressionOptions& o) {
  if (o.feedback != feedback_)
    throw std::logic_error("a compensator keeps its feedback (" + feedback_ + "), asked for " + o.feedback);
  // A new random stream for the new codec: the old one's message counter is gone, and replaying the start of the
  // run's stream (RandK positions, samples, stochastic rounding) would correlate the new codec with the old.
  context_.seed = kernels::splitmix64(context_.seed ^ (0x7E7A56E7ULL + ++retargets_));
  codec_ = makeCodec(o, context_);
  options_ = o;
}

double Compensator::alphaFor(c10::IntArrayRef shape) const {
  if (options_.alpha > 0) return options_.alpha;
  const double omega = codec_->omega(shape);
  return omega >= 0 ? 1.0 / (omega + 1.0) : 1.0;  // unknown omega: alpha 1 (DIANA becomes EF21 at the receiver)
}

bool Compensator::fullThisTime() {
  const uint64_t r = kernels::splitmix64(coinSeed_ + coins_++);
  return double(r >> 11) * 0x1.0p-53 < options_.p;
}

torch::Tensor& Compensator::slotState(int slot, const torch::Tensor& like, std::string& reset) {
  auto it = state_.find(slot);
  if (it == state_.end()) return state_[slot] = torch::zeros_like(like);
  if (it->second.sizes() != like.sizes()) {
    reset = feedback_ + " state of micro-batch " + std::to_string(slot) + " reset: shape " +
            c10::str(it->second.sizes()) + " became " + c10::str(like.sizes());
    it->second = torch::zeros_like(like);
  }
  return it->second;
}

bool Compensator::ensureBuffers(int64_t perSample) {
  if (buffers_.defined() && buffers_.size(1) == perSample) return false;
  const bool had = buffers_.defined();
  buffers_ = torch::zeros({aqsgd_.samples, perSample}, torch::kFloat16);
  filled_.assign(size_t(aqsgd_.samples), 0);
  return had;
}

void Compensator::remember(const std::vector<int64_t>& samples, const torch::Tensor& ids, const torch::Tensor& used) {
  buffers_.index_copy_(0, ids, used.reshape({used.size(0), -1}).to(torch::kFloat16));
  for (int64_t id : samples) filled_[size_t(id)] = 1;
}

Payload Compensator::send(const torch::Tensor& input, const MessageMeta& meta, SendReport& report) {
  const auto x = cpuFloat(input);
  const double xx = sq(x);
  report.err_den += xx;
  Payload p;
  torch::Tensor used;  // what the receiver will use
  if (feedback_ == "none") {
    p = codec_->encode(x);
    used = codec_->lossless() ? x : codec_->decode(p, torch::kCPU);
    report.comp_num += sq(used - x), report.comp_den += xx;
  } else if (feedback_ == "ef") {
    auto& e = slotState(meta.slot, x, report.reset);
    auto q = x + e;
    p = codec_->encode(q);
    used = codec_->decode(p, torch::kCPU);
    e = q - used;
    report.comp_num += sq(e), report.comp_den += sq(q);
  } else if (feedback_ == "ef21" || feedback_ == "diana" || feedback_ == "randdiana") {
    auto& h = slotState(meta.slot, x, report.reset);
    if (feedback_ == "randdiana" && fullThisTime()) {
      p = identity_->encode(x);
      h = x.clone();
      used = x;
    } else {
      auto diff = x - h;
      p = codec_->encode(diff);
      auto d = codec_->decode(p, torch::kCPU);
      report.comp_num += sq(d - diff), report.comp_den += sq(diff);
      if (feedback_ == "ef21") {
        h += d;
        used = h.clone();
      } else {
        used = h + d;
        h += alphaFor(x.sizes()) * d;
      }
    }
  } else if (feedback_ == "aqsgd") {
    if (!meta.samples || int64_t(meta.samples->size()) != x.size(0))
      throw std::logic_error("AQ-SGD needs the sample ids of every micro-batch");
    const int64_t per = x.numel() / x.size(0);
    if (ensureBuffers(per)) report.reset = "AQ-SGD buffers reset: activation size changed";
    auto ids = torch::tensor(*meta.samples, torch::kInt64);
    bool warm = meta.epoch >= aqsgd_.warmup_epochs;
    for (int64_t id : *meta.samples) warm = warm && filled_.at(size_t(id));
    if (!warm || codec_->lossless()) {  // warm-up, a sample seen for the first time, or nothing to gain
      p = identity_->encode(x);
      used = x;
    } else {
      auto m = buffers_.index_select(0, ids).to(torch::kFloat32).reshape(x.sizes());
      auto diff = x - m;
      p = codec_->encode(diff);
      auto d = codec_->decode(p, torch::kCPU);
      report.comp_num += sq(d - diff), report.comp_den += sq(diff);
      used = m + d;
    }
    remember(*meta.samples, ids, used);
  } else {
    throw ConfigError("unknown feedback '" + feedback_ + "'");
  }
  report.err_num += sq(used - x);
  if (measureOutput_) report.out_norm += std::sqrt(sq(used));
  report.values += p.values;
  return p;
}

torch::Tensor Compensator::receive(const Payload& payload, const torch::Device& device, const MessageMeta& meta) {
  size_t offset = 0;
  const bool whole = PayloadHeader::read(payload.bytes, offset).codec == CodecId::Identity;
  // A stateless receiver takes a whole tensor from any sender (GraVAC sends dense when no factor keeps enough).
  if (feedback_ == "none" || feedback_ == "ef") return whole ? identity_->decode(payload, device) : codec_->decode(payload, device);
  std::string ignored;
  if (feedback_ == "aqsgd") {
    if (!meta.samples) throw std::logic_error("AQ-SGD needs the sample ids of every micro-batch");
    auto x = whole ? identity_->decode(payload, torch::kCPU) : codec_->decode(payload, torch::kCPU);
    const int64_t per = x.numel() / std::max<int64_t>(1, x.size(0));
    ensureBuffers(per);
    auto ids = torch::tensor(*meta.samples, torch::kInt64);
    if (!whole) x = buffers_.index_select(0, ids).to(torch::kFloat32).reshape(x.sizes()) + x;
    remember(*meta.samples, ids, x);
    return onDevice(x, device);
  }
  // EF21, DIANA, Rand-DIANA: the receiver mirrors the sender's shift.
  const bool full = feedback_ == "randdiana" && fullThisTime();
  if (!codec_->lossless() && full != whole) throw PayloadError("Rand-DIANA ends disagree on the coin; both ends must share the run seed");
  auto d = full ? identity_->decode(payload, torch::kCPU) : codec_->decode(payload, torch::kCPU);
  auto& h = slotState(meta.slot, d, ignored);
  torch::Tensor used;
  if (full) {
    h = d.clone();
    used = d;
  } else if (feedback_ == "ef21") {
    h += d;
    used = h.clone();
  } else {
    used = h + d;
    h += alphaFor(d.sizes()) * d;
  }
  return onDevice(used, device);
}

}  // namespace ps
