#include "engine/session/RunStoreSink.h"

#include "engine/core/Metrics.h"

namespace ps {

RunStoreSink::RunStoreSink(std::shared_ptr<RunStore> store, int64_t runId) : store_(std::move(store)), run_(runId) {}

void RunStoreSink::stepMetrics(const StepRecord& s, std::vector<MetricPoint>& out) {
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

void RunStoreSink::evalMetrics(const EvalRecord& e, std::vector<MetricPoint>& out) {
  auto add = [&](std::string key, double v) {
    out.push_back({e.step, e.compressed ? key : metric::uncompressed(key), v, e.wall_s, e.emulated_s});
  };
  add(metric::kEvalLoss, e.loss);
  if (e.accuracy >= 0) add(metric::kEvalAccuracy, e.accuracy);
  if (e.perplexity >= 0) add(metric::kEvalPerplexity, e.perplexity);
}

void RunStoreSink::consume(const Telemetry& item) {
  if (auto s = std::get_if<StepRecord>(&item)) {
    stepMetrics(*s, metrics_);
    if (s->trace) traces_.push_back({s->step, s->epoch, encodeTrace(*s->trace)});
  } else if (auto e = std::get_if<EvalRecord>(&item)) {
    evalMetrics(*e, metrics_);
  } else if (auto h = std::get_if<HistogramRecord>(&item)) {
    histograms_.push_back({h->step, h->name, h->lo, h->hi, h->counts});
  } else if (auto ev = std::get_if<EventRecord>(&item)) {
    events_.push_back({ev->step, ev->wall_s, ev->kind, ev->detail.dump()});
    // The store is this thread's alone while the run goes: a saved checkpoint is recorded here, not by the session.
    if (ev->type() == EventKind::Checkpoint && ev->detail.contains("path") && ev->detail["path"].is_string())
      checkpoints_.push_back({ev->step, ev->detail["path"].get<std::string>()});
  } else if (auto st = std::get_if<StatusRecord>(&item)) {
    if (st->status != "running") final_ = *st;
  }
}

void RunStoreSink::flush() {
  const auto now = std::chrono::steady_clock::now();
  if (final_ || now - lastWrite_ >= std::chrono::milliseconds(500)) write();
}

void RunStoreSink::write() {
  if (!metrics_.empty() || !events_.empty() || !histograms_.empty() || !traces_.empty())
    store_->append(run_, metrics_, events_, histograms_, traces_);
  traces_.clear();
  metrics_.clear();
  events_.clear();
  histograms_.clear();
  for (const auto& c : checkpoints_) store_->addCheckpoint(run_, c);
  checkpoints_.clear();
  if (final_) {
    store_->finishRun(run_, final_->status, final_->reason, final_->summary.dump());
    final_.reset();
  }
  lastWrite_ = std::chrono::steady_clock::now();
}

}  // namespace ps
