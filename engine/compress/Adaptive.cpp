#include "engine/compress/Adaptive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ps {
namespace {

double ewma(double previous, double value, double alpha) {
  return previous < 0 ? value : (1 - alpha) * previous + alpha * value;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

std::string percent(double k) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", 100 * k);
  return text;
}

}  // namespace

GravacController::GravacController(const AdaptOptions& options) : o_(options) {
  // θ_min, then each the last times the step; an exponential policy squares the step every time.
  double theta = o_.theta_min, step = 0.5;
  while (theta >= o_.theta_max * (1 - 1e-9)) {
    candidates_.push_back(theta);
    theta *= step;
    if (o_.exponential) step *= step;
  }
  if (candidates_.empty()) candidates_.push_back(o_.theta_min);
  sending_ = o_.theta_min;
}

AdaptDecision GravacController::decide(std::string reason) {
  AdaptDecision d;
  d.k = sending_;
  d.dense = sendingDense_;
  d.explore = candidates_[index_];
  d.reason = std::move(reason);
  return d;
}

std::optional<AdaptDecision> GravacController::observe(const AdaptObservation& o) {
  ++step_;
  emaMin_ = ewma(emaMin_, o.gain_min, o_.alpha);
  emaCur_ = ewma(emaCur_, o.gain_current, o_.alpha);
  const double before = sending(), exploredBefore = exploring();
  std::string why;
  if (step_ <= o_.window) return std::nullopt;  // the first window sends θ_min while the averages settle

  if (!settled_) {
    // Compression throughput of the candidate under exploration: samples per second times the gain it keeps.
    ctSum_ += o.samples_per_s * emaCur_;
    if (++inInterval_ >= o_.window) {
      ct_.push_back(ctSum_ / double(inInterval_));
      ctSum_ = 0;
      inInterval_ = 0;
      std::vector<size_t> order(ct_.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ct_[a] > ct_[b]; });
      const bool close = order.size() >= 2 &&
                         std::abs(ct_[order[0]] - ct_[order[1]]) < o_.omega * std::max(ct_[order[0]], ct_[order[1]]);
      if (close || index_ + 1 >= candidates_.size()) {
        // Keep the more compressed of the two best (or the best, when the candidates ran out).
        const size_t keep = close ? std::max(order[0], order[1]) : order[0];
        index_ = keep;
        settled_ = true;
        why = "GraVAC settled on " + percent(candidates_[keep]) + " (compression throughput " + number(ct_[keep]) +
              " samples/s x gain)";
      } else {
        ++index_;
        emaCur_ = -1;  // a new factor starts its own average
        why = "GraVAC explores " + percent(candidates_[index_]);
      }
    }
  }
  // What to send: the explored factor if it keeps enough of the signal, else θ_min if that does, else dense.
  const double current = candidates_[index_];
  if (emaCur_ < 0) {
    // A factor just picked for exploration has no measurement yet: what is sent stays until it has one, so a
    // link never flips to an unmeasured factor and straight back.
  } else if (emaCur_ >= o_.epsilon) sending_ = current, sendingDense_ = false;
  else if (emaMin_ >= o_.epsilon) sending_ = o_.theta_min, sendingDense_ = false;
  else sendingDense_ = true;
  // A settle is reported even when the settled factor is the one already sent: it ends the exploration.
  if (sending() == before && exploring() == exploredBefore && why.empty()) return std::nullopt;
  if (why.empty())
    why = sendingDense_ ? "GraVAC sends dense: the gains of " + percent(current) + " (" + number(emaCur_) +
                              ") and of theta_min (" + number(emaMin_) + ") are below epsilon " + number(o_.epsilon)
                        : "GraVAC sends " + percent(sending_) + " (gain of the explored factor " + number(emaCur_) + ")";
  return decide(why);
}

AccordionController::AccordionController(const AdaptOptions& options) : o_(options), sending_(options.aggressive) {}

std::optional<AdaptDecision> AccordionController::observe(const AdaptObservation& o) {
  ema_ = ewma(ema_, o.norm, o_.alpha);
  if (++inInterval_ < o_.window) return std::nullopt;
  inInterval_ = 0;
  const double now = ema_;
  const double was = previous_;
  previous_ = now;
  if (was <= 0) return std::nullopt;  // the first interval only sets the reference
  const double change = std::abs(now - was) / was;
  const bool critical = change >= o_.eta;
  const double want = critical ? o_.theta_min : o_.aggressive;
  if (want == sending_) return std::nullopt;
  sending_ = want;
  AdaptDecision d;
  d.k = want;
  d.explore = want;
  d.reason = std::string("Accordion: gradient norm changed ") + std::to_string(int(100 * change)) + "% over the interval, " +
             (critical ? "a critical phase: mild " : "steady: aggressive ") + percent(want);
  return d;
}

}  // namespace ps
