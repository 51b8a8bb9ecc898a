#include "engine/compress/Adaptive.h"

#include "engine/compress/ControllerList.h"

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

// A compressor's gain from the two averages: what it would send over the raw tensor (1 for an all-zero tensor).
double gain(double emaSent, double emaRaw) {
  if (emaSent < 0 || emaRaw < 0) return -1;
  return emaRaw > 0 ? emaSent / emaRaw : 1.0;
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
  state_.resize(candidates_.size());
  ct_.resize(candidates_.size());
}

std::optional<AdaptDecision> GravacController::start() const {
  // GraVAC sends θ_min while its first window of measurements comes in (the sender starts there).
  AdaptDecision d;
  d.k = d.explore = candidates_.front();
  d.send = GravacSend::ThetaMin;
  d.reason = "GraVAC starts at theta_min for its first window";
  return d;
}

double GravacController::sending() const {
  if (send_ == GravacSend::Dense) return 1.0;
  return send_ == GravacSend::ThetaMin ? candidates_.front() : candidates_[index_];
}

double GravacController::gainMin() const {
  return gain(emaMin_, emaRaw_);
}
double GravacController::gainCurrent() const {
  return gain(emaCur_, emaRaw_);
}

AdaptDecision GravacController::decision(std::string reason) const {
  AdaptDecision d;
  d.k = sending();
  d.send = send_;
  d.explore = candidates_[index_];
  d.reason = std::move(reason);
  return d;
}

void GravacController::credit(double samplesPerSecond) {
  // The payload of this step was chosen after the previous one: its throughput belongs to that factor alone.
  if (send_ == GravacSend::Dense || !(samplesPerSecond > 0)) return;
  Candidate& c = state_[send_ == GravacSend::ThetaMin ? 0 : index_];
  c.throughputSum += samplesPerSecond;
  c.sent += 1;
}

void GravacController::measure(size_t i) {
  const Candidate& c = state_[i];
  const double g = i == 0 ? gainMin() : gainCurrent();  // θ_min's compressor persists; a candidate's is current
  if (c.sent > 0 && g >= 0)
    ct_[i] = c.throughputSum / double(c.sent) * g;
  else
    ct_[i].reset();  // never sent: no throughput of its own, so it cannot be ranked
}

bool GravacController::endInterval(std::string& why) {
  if (index_ != 0) measure(0);  // θ_min may have been sent meanwhile: its figure moves with its own steps
  measure(index_);
  state_[index_].emaSent = emaCur_;
  std::vector<size_t> ranked;
  for (size_t i = 0; i < ct_.size(); ++i)
    if (ct_[i]) ranked.push_back(i);
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) { return *ct_[a] > *ct_[b]; });
  const bool close = ranked.size() >= 2 && *ct_[ranked[0]] - *ct_[ranked[1]] < o_.omega * *ct_[ranked[1]];
  if (!close && index_ + 1 < candidates_.size()) {
    ++index_;
    emaCur_ = -1;  // the current compressor keeps its residual, but its gain at the new factor starts afresh
    why = "GraVAC explores " + percent(candidates_[index_]);
    return false;
  }
  // Keep the more compressed of the two best (or the best, when the candidates ran out).
  const size_t keep = ranked.empty() ? 0 : close ? std::max(ranked[0], ranked[1]) : ranked[0];
  if (keep != index_) {
    index_ = keep;
    // Its gain as measured when it was explored; θ_min's own compressor has measured it all along.
    emaCur_ = keep == 0 ? emaMin_ : state_[keep].emaSent;
  }
  settled_ = true;
  why = ranked.empty() ? "GraVAC settled on " + percent(candidates_[keep]) + ": no candidate kept epsilon " +
                             number(o_.epsilon) + " of the signal long enough to be sent"
                       : "GraVAC settled on " + percent(candidates_[keep]) + " (compression throughput " +
                             number(*ct_[keep]) + " samples/s x gain)";
  return true;
}

std::optional<AdaptDecision> GravacController::observe(const AdaptObservation& o) {
  ++step_;
  if (step_ > o_.window && !settled_) credit(o.samples_per_s);
  emaRaw_ = ewma(emaRaw_, o.measure(adapt_measure::kGravacRaw), o_.alpha);
  emaMin_ = ewma(emaMin_, o.measure(adapt_measure::kGravacMin), o_.alpha);
  emaCur_ = ewma(emaCur_, o.measure(adapt_measure::kGravacCurrent), o_.alpha);
  if (step_ <= o_.window) return std::nullopt;  // the first window sends θ_min while the averages settle

  const GravacSend sentBefore = send_;
  const size_t exploredBefore = index_;
  std::string why;
  if (!settled_ && ++inInterval_ >= o_.window) {
    inInterval_ = 0;
    endInterval(why);
  }
  // What to send next: the current factor if it keeps epsilon of the signal, else θ_min if that does, else dense.
  // A candidate just picked has no gain yet, so it is not sent before its first measurement.
  const double current = gainCurrent(), mild = gainMin();
  if (current >= o_.epsilon)
    send_ = index_ == 0 ? GravacSend::ThetaMin : GravacSend::Current;
  else if (mild >= o_.epsilon)
    send_ = GravacSend::ThetaMin;
  else
    send_ = GravacSend::Dense;
  if (send_ == sentBefore && index_ == exploredBefore && why.empty()) return std::nullopt;
  if (why.empty())
    why = send_ == GravacSend::Dense
              ? "GraVAC sends dense: the gains of " + percent(candidates_[index_]) + " (" + number(current) +
                    ") and of theta_min (" + number(mild) + ") are below epsilon " + number(o_.epsilon)
              : "GraVAC sends " + percent(sending()) + " (gain " +
                    number(send_ == GravacSend::Current ? current : mild) + ")";
  return decision(why);
}

AccordionController::AccordionController(const AdaptOptions& options) : o_(options), sending_(options.aggressive) {}

std::optional<AdaptDecision> AccordionController::observe(const AdaptObservation& o) {
  ema_ = ewma(ema_, std::sqrt(o.measure(adapt_measure::kSquaredNorm)), o_.alpha);
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
  d.send = GravacSend::Current;
  d.explore = want;
  d.reason = std::string("Accordion: gradient norm changed ") + std::to_string(int(100 * change)) +
             "% over the interval, " + (critical ? "a critical phase: mild " : "steady: aggressive ") + percent(want);
  return d;
}

std::unique_ptr<AdaptiveController> FixedFactorEntry::make(const AdaptOptions&) { return nullptr; }
std::unique_ptr<AdaptiveController> GravacEntry::make(const AdaptOptions& o) {
  return std::make_unique<GravacController>(o);
}
std::unique_ptr<AdaptiveController> AccordionEntry::make(const AdaptOptions& o) {
  return std::make_unique<AccordionController>(o);
}

std::unique_ptr<AdaptiveController> makeController(const AdaptOptions& options) {
  std::unique_ptr<AdaptiveController> made;
  ControllerList::named(options.kind, [&](auto entry) { made = decltype(entry)::make(options); });
  return made;
}

}  // namespace ps
