#include "engine/session/RunStoreSink.h"
#include "engine/core/RunSummary.h"

#include "engine/core/Metrics.h"
#include "engine/telemetry/StepMetrics.h"

namespace ps {

RunStoreSink::RunStoreSink(std::shared_ptr<RunStore> store, int64_t runId, FailureHandler onFailure)
    : store_(std::move(store)), run_(runId), onFailure_(std::move(onFailure)) {}

void RunStoreSink::consume(const Telemetry& item) {
  if (!failure_.empty()) {  // nothing more is kept: only the run's end is still worth a try
    if (auto st = std::get_if<StatusRecord>(&item); st && st->status != run_status::kRunning) final_ = *st;
    return;
  }
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
    if (st->status != run_status::kRunning) final_ = *st;
  }
}

void RunStoreSink::flush() {
  const auto now = std::chrono::steady_clock::now();
  if (!failure_.empty()) {
    if (final_) recordFailedEnd();
    return;
  }
  if (!final_ && now - lastWrite_ < std::chrono::milliseconds(500)) return;
  try {
    write();
  } catch (const std::exception& e) {
    failure_ = e.what();
    if (failure_.empty()) failure_ = "the run store refused a write";
    metrics_.clear(), events_.clear(), histograms_.clear(), traces_.clear(), checkpoints_.clear();
    if (onFailure_) onFailure_(failure_);
    if (final_) recordFailedEnd();
  }
}

void RunStoreSink::recordFailedEnd() {
  nlohmann::json summary = final_->summary;
  const std::string reason = "the run store failed: " + failure_;
  if (summary.is_object()) {
    summary[summary_key::kStatus] = run_status::kFailed;
    summary[summary_key::kReason] = reason;
  }
  final_.reset();
  try {
    store_->finishRun(run_, run_status::kFailed, reason, summary.dump());
  } catch (const std::exception&) {
    // The store takes nothing at all: the next start marks the run failed (reapOrphans).
  }
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
