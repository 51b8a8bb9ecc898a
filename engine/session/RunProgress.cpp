#include "engine/session/RunProgress.h"

#include <numeric>

namespace ps {

void RunProgress::add(StepRecord& rec) {
  for (const auto& l : rec.links) {
    rec.codec_s += l.encode_s + l.decode_s;
    rec.link_s += l.modelled_s;
    raw += l.raw_bytes;
    wire += l.wire_bytes;
  }
  emulated += rec.emulated_step_s;
  rec.emulated_s = emulated;
  step = rec.step;
  recentLoss.push_back(rec.loss);
  if (recentLoss.size() > kRecentLosses) recentLoss.pop_front();
}

RunSummary RunProgress::summary(int64_t runId, bool classifier, bool headlineCompressed, double wallSeconds) const {
  RunSummary s;
  s.run_id = runId;
  s.status = status;
  s.reason = reason;
  s.steps = step;
  if (!recentLoss.empty())
    s.train_loss = std::accumulate(recentLoss.begin(), recentLoss.end(), 0.0) / double(recentLoss.size());
  s.classifier = classifier;
  auto figures = [](const std::optional<EvalRecord>& e) {
    EvalFigures f;
    if (e) f.loss = e->loss, f.accuracy = e->accuracy, f.perplexity = e->perplexity;
    return f;
  };
  s.compressed = figures(evalCompressed);
  s.uncompressed = figures(evalPlain);
  s.eval = headlineCompressed ? s.compressed : s.uncompressed;  // both are reported (null where not made)
  s.bytes_raw = raw;
  s.bytes_wire = wire;
  s.wall_seconds = wallSeconds;
  s.emulated_seconds = emulated;
  return s;
}

}  // namespace ps
