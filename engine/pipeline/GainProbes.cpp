#include "engine/pipeline/GainProbes.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace ps {

void GainProbes::configure(const CompressionOptions& base, CodecContext c, const AqsgdOptions& aqsgd, double thetaMin,
                           double thetaCurrent) {
  if (thetaMin <= 0 || thetaCurrent <= 0) {
    min_.reset();
    current_.reset();
    return;
  }
  c.seed ^= 0x6A5ACULL;  // probes draw their own random numbers (RandK, sampled thresholds)
  CompressionOptions o = base;
  o.feedback = "ef";
  o.adapt = "none";
  auto probe = [&](int which, double k, std::unique_ptr<Compensator>& slot) {
    if (slot && k_[which] == k && method_ == o.method) return;  // unchanged: keeps its residual
    o.k = k;
    slot = std::make_unique<Compensator>(o, c, aqsgd);
    k_[which] = k;
  };
  probe(0, thetaMin, min_);
  probe(1, thetaCurrent, current_);
  method_ = o.method;
}

void GainProbes::measure(const torch::Tensor& x, const MessageMeta& meta) {
  if (min_) {
    SendReport r;
    min_->send(x, meta, r);
    keptMin_ += r.comp_den - r.comp_num, totalMin_ += r.comp_den;
    r = SendReport{};
    current_->send(x, meta, r);
    keptCurrent_ += r.comp_den - r.comp_num, totalCurrent_ += r.comp_den;
  }
  if (measureNorm_) normSquared_ += x.square().sum().item<double>();
}

void GainProbes::report(LinkTraffic& t) {
  // ||D(C(p))||^2 = ||p||^2 - ||D(C(p)) - p||^2 for a sparsifier with float values (the kept part is orthogonal to
  // the dropped part); with quantized values it is the usual estimate.
  auto gain = [](double kept, double total) { return total > 0 ? std::sqrt(std::max(0.0, kept / total)) : -1.0; };
  if (min_) {
    t.gain_min = gain(keptMin_, totalMin_);
    t.gain_current = gain(keptCurrent_, totalCurrent_);
  }
  if (measureNorm_) t.norm = std::sqrt(normSquared_);
  keptMin_ = totalMin_ = keptCurrent_ = totalCurrent_ = normSquared_ = 0;
}

}  // namespace ps
