#include "engine/session/RunStoreSink.h"

namespace ps {

RunStoreSink::RunStoreSink(std::shared_ptr<RunStore> store, int64_t runId) : store_(std::move(store)), run_(runId) {}

void RunStoreSink::stepMetrics(const StepRecord& s, std::vector<MetricPoint>& out) {
  auto add = [&](std::string key, double v) { out.push_back({s.step, std::move(key), v, s.wall_s, s.emulated_s}); };
  add("train/loss", s.loss);
  if (s.accuracy >= 0) add("train/accuracy", s.accuracy);
  add("train/lr", s.lr);
  add("train/epoch", double(s.epoch));
  add("time/step_s", s.step_s);
  add("time/compute_s", s.compute_s);
  add("time/codec_s", s.codec_s);
  add("time/link_s", s.link_s);
  add("time/emulated_step_s", s.emulated_step_s);
  uint64_t raw = 0, wire = 0;
  for (const auto& l : s.links) {
    const std::string p = "link" + std::to_string(l.boundary) + "/" + directionName(l.direction) + "/";
    add(p + "raw_bytes", double(l.raw_bytes));
    add(p + "wire_bytes", double(l.wire_bytes));
    add(p + "ratio", l.ratio());
    add(p + "bits_per_element", l.bitsPerElement());
    add(p + "density", l.density());
    add(p + "rel_error", l.rel_error);
    add(p + "rel_error_compensated", l.rel_error_compensated);
    add(p + "codec_s", l.encode_s + l.decode_s);
    add(p + "modelled_s", l.modelled_s);
    raw += l.raw_bytes;
    wire += l.wire_bytes;
  }
  add("bytes/raw", double(raw));
  add("bytes/wire", double(wire));
}

void RunStoreSink::evalMetrics(const EvalRecord& e, std::vector<MetricPoint>& out) {
  const std::string suffix = e.compressed ? "" : "_uncompressed";
  auto add = [&](std::string key, double v) { out.push_back({e.step, std::move(key) + suffix, v, e.wall_s, e.emulated_s}); };
  add("eval/loss", e.loss);
  if (e.accuracy >= 0) add("eval/accuracy", e.accuracy);
  if (e.perplexity >= 0) add("eval/perplexity", e.perplexity);
}

void RunStoreSink::consume(const Telemetry& item) {
  if (auto s = std::get_if<StepRecord>(&item)) {
    stepMetrics(*s, metrics_);
  } else if (auto e = std::get_if<EvalRecord>(&item)) {
    evalMetrics(*e, metrics_);
  } else if (auto h = std::get_if<HistogramRecord>(&item)) {
    histograms_.push_back({h->step, h->name, h->lo, h->hi, h->counts});
  } else if (auto ev = std::get_if<EventRecord>(&item)) {
    events_.push_back({ev->step, ev->wall_s, ev->kind, ev->detail.dump()});
  } else if (auto st = std::get_if<StatusRecord>(&item)) {
    if (st->status != "running") final_ = *st;
  }
}

void RunStoreSink::flush() {
  const auto now = std::chrono::steady_clock::now();
  if (final_ || now - lastWrite_ >= std::chrono::milliseconds(500)) write();
}

void RunStoreSink::write() {
  if (!metrics_.empty() || !events_.empty() || !histograms_.empty()) store_->append(run_, metrics_, events_, histograms_);
  metrics_.clear();
  events_.clear();
  histograms_.clear();
  if (final_) {
    store_->finishRun(run_, final_->status, final_->reason, final_->summary.dump());
    final_.reset();
  }
  lastWrite_ = std::chrono::steady_clock::now();
}

}  // namespace ps
