#include "engine/telemetry/StepMetrics.h"

namespace ps {

void stepMetrics(const StepRecord& s, std::vector<MetricPoint>& out) {
  namespace m = metric;
  auto add = [&](std::string key, double v) { out.push_back({s.step, std::move(key), v, s.wall_s, s.emulated_s}); };
  add(m::kTrainLoss, s.loss);
  if (s.accuracy >= 0) add(m::kTrainAccuracy, s.accuracy);
  add(m::kTrainLr, s.lr);
  add(m::kTrainEpoch, double(s.epoch));
  add(m::kStepSeconds, s.step_s);
  add(m::kComputeSeconds, s.compute_s);
  add(m::kCodecSeconds, s.codec_s);
  add(m::kLinkSeconds, s.link_s);
  add(m::kEmulatedStepSeconds, s.emulated_step_s);
  if (s.control_s >= 0) add(m::kControlSeconds, s.control_s);
  uint64_t raw = 0, wire = 0;
  for (const auto& l : s.links) {
    auto link = [&](const char* leaf, double v) { add(m::linkKey(l.boundary, l.direction, leaf), v); };
    link(m::leaf::kRawBytes, double(l.raw_bytes));
    link(m::leaf::kWireBytes, double(l.wire_bytes));
    link(m::leaf::kRatio, l.ratio());
    link(m::leaf::kBitsPerElement, l.bitsPerElement());
    link(m::leaf::kDensity, l.density());
    link(m::leaf::kRelError, l.rel_error);
    link(m::leaf::kRelErrorCompensated, l.rel_error_compensated);
    link(m::leaf::kCodecSeconds, l.encode_s + l.decode_s);
    link(m::leaf::kModelledSeconds, l.modelled_s);
    raw += l.raw_bytes;
    wire += l.wire_bytes;
  }
  add(m::kRawBytes, double(raw));
  add(m::kWireBytes, double(wire));
}

void evalMetrics(const EvalRecord& e, std::vector<MetricPoint>& out) {
  auto add = [&](std::string key, double v) {
    out.push_back({e.step, e.compressed ? key : metric::uncompressed(key), v, e.wall_s, e.emulated_s});
  };
  add(metric::kEvalLoss, e.loss);
  if (e.accuracy >= 0) add(metric::kEvalAccuracy, e.accuracy);
  if (e.perplexity >= 0) add(metric::kEvalPerplexity, e.perplexity);
}

}  // namespace ps
