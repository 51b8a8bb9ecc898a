#include "engine/compress/GravacCompressors.h"

#include "engine/compress/ControllerList.h"

#include <torch/torch.h>

#include <cmath>
#include <cstdio>

namespace ps {
namespace {

CompressionOptions arm(CompressionOptions o, double k) {
  o.k = k;
  o.feedback = "ef";  // GraVAC's compressors always keep a residual
  o.adapt = "none";
  return o;
}

}  // namespace

GravacCompressors::GravacCompressors(const CompressionOptions& options, const CodecContext& context)
    : options_(options), currentK_(options.theta_min) {
  CodecContext c = context;
  min_ = std::make_unique<Compensator>(arm(options, options.theta_min), c, AqsgdOptions{});
  c.seed ^= 0x6A5ACULL;  // the two draw their own random numbers (RandK, sampled thresholds)
  current_ = std::make_unique<Compensator>(arm(options, currentK_), c, AqsgdOptions{});
  CompressionOptions none;
  dense_ = std::make_unique<Compensator>(none, context, AqsgdOptions{});
  min_->measureOutput(true);
  current_->measureOutput(true);
}

void GravacCompressors::select(GravacSend send, double current) {
  if (current != currentK_) {
    current_->retarget(arm(options_, current));
    currentK_ = current;
  }
  send_ = send;
}

double GravacCompressors::sentK() const {
  return send_ == GravacSend::Dense ? 1.0 : send_ == GravacSend::ThetaMin ? options_.theta_min : currentK_;
}

Payload GravacCompressors::send(const torch::Tensor& x, const MessageMeta& meta, SendReport& report) {
  SendReport fromMin, fromCurrent;
  Payload pMin = min_->send(x, meta, fromMin);
  Payload pCurrent = current_->send(x, meta, fromCurrent);
  normRaw_ += std::sqrt(fromMin.err_den);  // err_den is |x|^2 of this message
  normMin_ += fromMin.out_norm;
  normCurrent_ += fromCurrent.out_norm;
  SendReport sent;
  Payload p;
  if (send_ == GravacSend::Dense) {
    p = dense_->send(x, meta, sent);
  } else {
    sent = send_ == GravacSend::ThetaMin ? fromMin : fromCurrent;
    p = std::move(send_ == GravacSend::ThetaMin ? pMin : pCurrent);
  }
  report.err_num += sent.err_num, report.err_den += sent.err_den;
  report.comp_num += sent.comp_num, report.comp_den += sent.comp_den;
  report.values += sent.values;
  for (const std::string* reset : {&fromMin.reset, &fromCurrent.reset})
    if (!reset->empty()) report.reset += (report.reset.empty() ? "" : "; ") + *reset;
  return p;
}

void GravacCompressors::report(LinkTraffic& t) {
  t.measures[adapt_measure::kGravacRaw] += normRaw_;
  t.measures[adapt_measure::kGravacMin] += normMin_;
  t.measures[adapt_measure::kGravacCurrent] += normCurrent_;
  normRaw_ = normMin_ = normCurrent_ = 0;
}

std::unique_ptr<AdaptiveSender> GravacEntry::makeSender(const CompressionOptions& options,
                                                        const CodecContext& context) {
  return std::make_unique<GravacCompressors>(options, context);
}

std::string GravacCompressors::describe() const {
  if (send_ == GravacSend::Dense) return "none (GraVAC: dense)";
  return (send_ == GravacSend::ThetaMin ? min_ : current_)->describe() + " (GraVAC)";
}

}  // namespace ps
