#include "engine/compress/Compensation.h"

#include "engine/compress/CompensationList.h"
#include "engine/compress/IdentityCodec.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace ps {
namespace {

// The payload's codec decodes it: the identity for a whole tensor, the compensator's codec otherwise.
torch::Tensor decodeAny(Compensator& c, const HeadedPayload& p, bool whole, const MessageMeta& meta,
                        const torch::Device& device) {
  return whole ? c.identity().decode(p, device, meta.shape) : c.codec().decode(p, device, meta.shape);
}

// None: what the codec gives is used as it is.
class NoCompensation final : public CompensationRule {
 public:
  Payload send(Compensator& c, const torch::Tensor& x, const MessageMeta&, SendReport&, SentTensors& sent) override {
    Payload p = c.codec().encode(x);
    sent.used = c.codec().lossless() ? x : c.codec().decode(p, x.device());
    sent.codecInput = x, sent.codecOutput = sent.used;
    return p;
  }
  // A stateless receiver takes a whole tensor from any sender (GraVAC sends dense when no factor keeps enough).
  torch::Tensor receive(Compensator& c, const HeadedPayload& p, bool whole, const MessageMeta& meta,
                        const torch::Device& device) override {
    return decodeAny(c, p, whole, meta, device);
  }
};

// EF: e <- x + e - D(C(x + e)); the receiver keeps nothing.
class ErrorFeedback final : public CompensationRule {
 public:
  Payload send(Compensator& c, const torch::Tensor& x, const MessageMeta& meta, SendReport& report,
               SentTensors& sent) override {
    auto& e = c.slotState(meta.slot, x, report.reset);
    auto q = x + e;
    Payload p = c.codec().encode(q);
    sent.used = c.codec().decode(p, x.device());
    e = q - sent.used;
    sent.codecInput = q, sent.codecOutput = sent.used;
    return p;
  }
  torch::Tensor receive(Compensator& c, const HeadedPayload& p, bool whole, const MessageMeta& meta,
                        const torch::Device& device) override {
    return decodeAny(c, p, whole, meta, device);
  }
};

// EF21, DIANA and Rand-DIANA compress the difference to a shift h that both ends keep: EF21 moves h by the whole
// decoded difference and uses h, DIANA uses h + d and moves h by alpha d. Rand-DIANA (Shulgin and Richtarik's
// randomised shift) uses h + d and leaves h where it is, except with probability p, when x travels whole and both
// ends set h = x: its shift only ever moves by such a reset.
class Shifted final : public CompensationRule {
 public:
  enum class Kind { Ef21, Diana, RandDiana };
  explicit Shifted(Kind kind) : kind_(kind) {}

  Payload send(Compensator& c, const torch::Tensor& x, const MessageMeta& meta, SendReport& report,
               SentTensors& sent) override {
    auto& h = c.slotState(meta.slot, x, report.reset);
    if (kind_ == Kind::RandDiana && c.fullThisTime()) {
      h = x.clone();
      sent.used = x;
      return c.identity().encode(x);
    }
    auto diff = x - h;
    Payload p = c.codec().encode(diff);
    auto d = c.codec().decode(p, x.device());
    sent.codecInput = diff, sent.codecOutput = d;
    sent.used = step(c, h, d);
    return p;
  }

  torch::Tensor receive(Compensator& c, const HeadedPayload& p, bool whole, const MessageMeta& meta,
                        const torch::Device& device) override {
    const bool full = kind_ == Kind::RandDiana && c.fullThisTime();
    if (!c.codec().lossless() && full != whole)
      throw PayloadError("Rand-DIANA ends disagree on the coin; both ends must share the run seed");
    auto d = decodeAny(c, p, full, meta, device);
    std::string ignored;
    auto& h = c.slotState(meta.slot, d, ignored);
    if (!full) return step(c, h, d);
    h = d.clone();
    return d;
  }

 private:
  torch::Tensor step(Compensator& c, torch::Tensor& h, const torch::Tensor& d) const {
    if (kind_ == Kind::Ef21) {
      h += d;
      return h.clone();
    }
    auto used = h + d;
    if (kind_ == Kind::Diana) h += c.alphaFor(d.sizes()) * d;
    return used;
  }

  Kind kind_;
};

// AQ-SGD: per training sample, the change of its activation since the last epoch is compressed; warm-up epochs and
// samples seen for the first time travel whole.
class Aqsgd final : public CompensationRule {
 public:
  Payload send(Compensator& c, const torch::Tensor& x, const MessageMeta& meta, SendReport& report,
               SentTensors& sent) override {
    checkSamples(meta, &x);
    if (c.ensureBuffers(x.numel() / x.size(0), x.device()))
      report.reset = "AQ-SGD buffers reset: activation size changed";
    auto ids = torch::tensor(*meta.samples, torch::kInt64).to(x.device());
    Payload p;
    if (!c.warm(meta) || c.codec().lossless()) {  // warm-up, a sample seen for the first time, or nothing to gain
      p = c.identity().encode(x);
      sent.used = x;
    } else {
      auto m = c.buffered(ids, x.sizes());
      auto diff = x - m;
      p = c.codec().encode(diff);
      auto d = c.codec().decode(p, x.device());
      sent.codecInput = diff, sent.codecOutput = d;
      sent.used = m + d;
    }
    c.remember(*meta.samples, ids, sent.used);
    return p;
  }

  torch::Tensor receive(Compensator& c, const HeadedPayload& p, bool whole, const MessageMeta& meta,
                        const torch::Device& device) override {
    checkSamples(meta, nullptr);
    auto x = decodeAny(c, p, whole, meta, device);
    // The buffers live where the decoded tensor is: `device` may name a device type without an index ("cuda"), which
    // never equals the buffers' own device and would reset them at every message.
    c.ensureBuffers(x.numel() / std::max<int64_t>(1, x.size(0)), x.device());
    auto ids = torch::tensor(*meta.samples, torch::kInt64).to(x.device());
    if (!whole) x = c.buffered(ids, x.sizes()) + x;
    c.remember(*meta.samples, ids, x);
    return x;
  }

 private:
  static void checkSamples(const MessageMeta& meta, const torch::Tensor* x) {
    if (!meta.samples || (x && int64_t(meta.samples->size()) != x->size(0)))
      throw std::logic_error("AQ-SGD needs the sample ids of every micro-batch");
  }
};

std::unique_ptr<CompensationRule> makeRule(const std::string& feedback) {
  std::unique_ptr<CompensationRule> rule;
  CompensationList::named(feedback, [&](auto entry) { rule = decltype(entry)::make(); });
  if (!rule) throw ConfigError("unknown feedback '" + feedback + "'");
  return rule;
}

}  // namespace

std::unique_ptr<CompensationRule> NoCompensationEntry::make() { return std::make_unique<NoCompensation>(); }
std::unique_ptr<CompensationRule> ErrorFeedbackEntry::make() { return std::make_unique<ErrorFeedback>(); }
std::unique_ptr<CompensationRule> Ef21Entry::make() { return std::make_unique<Shifted>(Shifted::Kind::Ef21); }
std::unique_ptr<CompensationRule> DianaEntry::make() { return std::make_unique<Shifted>(Shifted::Kind::Diana); }
std::unique_ptr<CompensationRule> RandDianaEntry::make() { return std::make_unique<Shifted>(Shifted::Kind::RandDiana); }
std::unique_ptr<CompensationRule> AqsgdEntry::make() { return std::make_unique<Aqsgd>(); }

Compensator::Compensator(const CompressionOptions& o, const CodecContext& c, const AqsgdOptions& aqsgd)
    : options_(o), context_(c), feedback_(o.feedback), rule_(makeRule(o.feedback)), stateless_(o.feedback == "none"),
      codec_(makeCodec(o, c)), identity_(IdentityEntry::make({}, c)), aqsgd_(aqsgd),
      coinSeed_(kernels::splitmix64(c.stream() ^ 0xC0C0ULL)) {}

Compensator::~Compensator() = default;

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
  codec_->setResidence(residence_);
  options_ = o;
}

void Compensator::setResidence(Codec::Residence r) {
  residence_ = r;
  codec_->setResidence(r);
  identity_->setResidence(r);
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

bool Compensator::ensureBuffers(int64_t perSample, const torch::Device& device) {
  if (buffers_.defined() && buffers_.size(1) == perSample && buffers_.device() == device) return false;
  const bool had = buffers_.defined();
  buffers_ = torch::zeros({aqsgd_.samples, perSample}, torch::TensorOptions(torch::kFloat16).device(device));
  filled_.assign(size_t(aqsgd_.samples), 0);
  return had;
}

void Compensator::remember(const std::vector<int64_t>& samples, const torch::Tensor& ids, const torch::Tensor& used) {
  buffers_.index_copy_(0, ids, used.reshape({used.size(0), -1}).to(torch::kFloat16));
  for (int64_t id : samples) filled_[size_t(id)] = 1;
}

Payload Compensator::send(const torch::Tensor& input, const MessageMeta& meta, SendReport& report) {
  if (lossless() && !measureOutput_) {  // nothing kept, nothing lost: the codec alone, and no error to measure
    Payload p = codec_->encode(input);
    report.values += p.values;
    return p;
  }
  const auto x = input.detach().to(torch::kFloat32).contiguous();  // where the stage is: its state is there too
  SentTensors sent;
  Payload p = rule_->send(*this, x, meta, report, sent);
  measureSent(x, sent, measureOutput_, report);
  report.values += p.values;
  return p;
}

// The sums are float32 on the device, as each figure read alone would be. Each is made in its own statement, so its
// temporaries are gone before the next one's are made (a message can be large). On the CPU reading a sum waits for
// nothing, and stacking them would only cost: there each is read as it is.
void measureSent(const torch::Tensor& x, const SentTensors& sent, bool output, SendReport& report) {
  std::vector<torch::Tensor> sums;
  sums.reserve(5);
  sums.push_back((sent.used - x).pow(2).sum());
  sums.push_back(x.pow(2).sum());
  const bool codecUsed = sent.codecInput.defined();
  if (codecUsed) {
    sums.push_back((sent.codecOutput - sent.codecInput).pow(2).sum());
    sums.push_back(sent.codecInput.pow(2).sum());
  }
  if (output) sums.push_back(sent.used.pow(2).sum());
  if (report.deferred) {
    // In the slots settle() reads, in float64 as the figures below are summed, so that deferring changes no bit.
    const torch::Tensor zero = torch::zeros({}, sums[0].options());
    if (!codecUsed) sums.insert(sums.begin() + 2, 2, zero);
    if (!output) sums.push_back(zero);
    torch::Tensor row = torch::stack(sums).to(torch::kDouble);
    if (output) row.narrow(0, 4, 1).sqrt_();
    if (report.pending.defined())
      report.pending.add_(row);
    else
      report.pending = row;
    return;
  }
  double v[5];
  if (x.is_cuda()) {
    const torch::Tensor host = torch::stack(sums).to(torch::kCPU, torch::kDouble);
    std::copy_n(host.data_ptr<double>(), sums.size(), v);
  } else {
    for (size_t i = 0; i < sums.size(); ++i) v[i] = sums[i].item<double>();
  }
  report.err_num += v[0], report.err_den += v[1];
  if (codecUsed) report.comp_num += v[2], report.comp_den += v[3];
  if (output) report.out_norm += std::sqrt(v[codecUsed ? 4 : 2]);
}

void settle(SendReport& report) {
  if (!report.pending.defined()) return;
  const torch::Tensor host = report.pending.to(torch::kCPU).contiguous();
  report.pending = torch::Tensor();
  const double* v = host.data_ptr<double>();
  report.err_num += v[0], report.err_den += v[1];
  report.comp_num += v[2], report.comp_den += v[3];
  report.out_norm += v[4];
}

torch::Tensor Compensator::receive(const Payload& payload, const torch::Device& device, const MessageMeta& meta) {
  if (lossless()) return codec_->decode(payload, device, meta.shape);
  const HeadedPayload headed(payload);  // read once: it says which codec decodes the body
  return rule_->receive(*this, headed, headed.header.codec == identity_->id(), meta, device);
}

torch::Tensor Compensator::buffered(const torch::Tensor& ids, c10::IntArrayRef like) {
  return buffers_.index_select(0, ids).to(torch::kFloat32).reshape(like);
}

bool Compensator::warm(const MessageMeta& meta) const {
  if (meta.epoch < aqsgd_.warmup_epochs) return false;
  for (int64_t id : *meta.samples)
    if (!filled_.at(size_t(id))) return false;
  return true;
}

}  // namespace ps
