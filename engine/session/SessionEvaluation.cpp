#include "engine/session/Session.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

// A session's evaluations: the passes through the compressed and the uncompressed links, the headline figure, the
// target accuracy that may end a run there, and the final evaluation.

namespace ps {

using Clock = std::chrono::steady_clock;

void Session::evaluate(RunProgress& p) {
  const int64_t n = built_.data.evalSize(), bs = config_.eval.batch_size;
  const int64_t batches =
      config_.eval.max_batches > 0 ? std::min(config_.eval.max_batches, (n + bs - 1) / bs) : (n + bs - 1) / bs;
  // Identity links change nothing: one pass serves both figures. With eval.both_passes off only the compressed pass
  // is made (the configuration keeps it the headline), and an uncompressed figure of an earlier step is dropped
  // rather than reported as the last one.
  bool lossless = true;
  for (int b = 0; b + 1 < built_.pipeline->stages(); ++b) lossless = lossless && built_.pipeline->link(b).lossless();
  for (bool compressed : {true, false}) {
    if (!compressed && lossless) {  // the compressed pass, always made, was this step's
      EvalRecord plain = *p.evalCompressed;
      plain.compressed = false;
      p.evalPlain = plain;
      bus_.publish(plain);
      break;
    }
    if (!compressed && !config_.eval.both_passes) {
      p.evalPlain.reset();
      break;
    }
    const int64_t rows = std::min(n, batches * bs);
    // Watchers hear the pass begin, then its progress at most ten times a second, then its end.
    bus_.publish(ProgressRecord{p.step, compressed, 0, batches});
    auto told = Clock::now();
    const auto progress = [&](int64_t done, int64_t total) {
      if (done < total && Clock::now() - told < std::chrono::milliseconds(100)) return;
      told = Clock::now();
      bus_.publish(ProgressRecord{p.step, compressed, done, total});
    };
    const EvalResult total = built_.pipeline->evaluate(built_.data.eval_x.slice(0, 0, rows),
                                                       built_.data.eval_y.slice(0, 0, rows), bs, compressed, progress);
    EvalRecord e;
    e.step = p.step;
    e.wall_s = elapsed();
    e.emulated_s = p.emulated;
    e.compressed = compressed;
    e.samples = total.samples;
    e.loss = total.samples ? total.loss_sum / double(total.samples) : 0.0;
    if (built_.pipeline->kind() == TaskKind::Classifier)
      e.accuracy = double(total.correct) / double(std::max<int64_t>(1, total.predictions));
    else
      e.perplexity = std::exp(e.loss);
    (compressed ? p.evalCompressed : p.evalPlain) = e;
    bus_.publish(e);
  }
}

const EvalRecord* Session::headlineAt(const RunProgress& p) const {
  const auto& e = config_.compression.inference ? p.evalCompressed : p.evalPlain;
  return e && e->step == p.step ? &*e : nullptr;
}

bool Session::reachedTarget(RunProgress& p) const {
  const double target = config_.eval.stop_at_accuracy;
  const EvalRecord* e = headlineAt(p);
  if (target <= 0 || !e || e->accuracy < target) return false;
  char why[160];
  std::snprintf(why, sizeof why, "%s = %.6g at step %lld: %s accuracy %.2f%%", kReachedTarget, target,
                static_cast<long long>(p.step), e->compressed ? "compressed" : "uncompressed", 100 * e->accuracy);
  p.status = run_status::kStopped;  // not finished: what counts a finished run's accuracy must not take this one's
  p.reason = why;
  return true;
}

// The final evaluation (unless this step's was made: a run that stopped there), the run's status and the checkpoint
// it asked for.
void Session::finishTraining(RunProgress& p) {
  if (p.status != run_status::kDiverged && !headlineAt(p)) evaluate(p);
  if (p.status == run_status::kRunning) p.status = run_status::kFinished;
  if (config_.run.save_checkpoint && p.status != run_status::kDiverged) saveCheckpointIfAsked(p);
}

}  // namespace ps
