// Adaptive compression in a session: GraVAC and Accordion controllers (engine/compress/Adaptive.h), one per link
// direction that asks for one, fed after every step and applied between steps. Each change of the factor a link
// sends is a "setting" event of the run (source "gravac" or "accordion", with the reason), so charts mark it like a
// manual change; a decision that keeps the factor (GraVAC settling on what it sends) is an "adapt" event. A factor
// change is written as the boundary's own key, compression.boundaries.N.<direction>.k. The weight gradients of
// data-parallel replicas have one controller for the whole model (compression.gradients.k), fed with the gains
// of every stage's exchange weighted by its size; every rank runs the same controllers on the same merged step
// result, so all ranks decide the same.
#include "engine/session/Session.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>

namespace ps {
namespace {

AdaptOptions adaptOptions(const CompressionOptions& o) {
  AdaptOptions a;
  a.kind = o.adapt;
  a.theta_min = o.theta_min;
  a.theta_max = o.theta_max;
  a.exponential = o.adapt_policy == "exponential";
  a.epsilon = o.epsilon;
  a.omega = o.omega;
  a.window = int(o.window);
  a.eta = o.eta;
  a.aggressive = o.k;
  return a;
}

const char* directionKey(Direction d) { return d == Direction::Forward ? "forward" : "backward"; }

std::string kKey(int boundary, Direction d) {
  if (d == Direction::Gradients) return "compression.gradients.k";
  return "compression.boundaries." + std::to_string(boundary) + "." + directionKey(d) + ".k";
}

const CompressionOptions& optionsOf(const Config& c, int boundary, Direction d) {
  if (d == Direction::Gradients) return c.compression.gradients;
  return (d == Direction::Forward ? c.compression.boundary_forward : c.compression.boundary_backward)[size_t(boundary)];
}

// The step's traffic for an adapter: a link direction, or every stage's gradient exchange combined.
std::optional<LinkTraffic> trafficFor(const StepRecord& rec, int boundary, Direction d) {
  if (d != Direction::Gradients) {
    for (const auto& l : rec.links)
      if (l.boundary == boundary && l.direction == d) return l;
    return std::nullopt;
  }
  LinkTraffic total;
  total.direction = d;
  double weight = 0, gmin = 0, gcur = 0, norm2 = 0;
  bool any = false, gains = true, norms = true;
  for (const auto& l : rec.links) {
    if (l.direction != d) continue;
    any = true;
    const double w = double(std::max<uint64_t>(1, l.elements));
    weight += w;
    gains = gains && l.gain_min >= 0 && l.gain_current >= 0;
    gmin += w * l.gain_min * l.gain_min, gcur += w * l.gain_current * l.gain_current;
    norms = norms && l.norm >= 0;
    norm2 += l.norm * l.norm;
  }
  if (!any) return std::nullopt;
  total.gain_min = gains ? std::sqrt(gmin / weight) : -1;
  total.gain_current = gains ? std::sqrt(gcur / weight) : -1;
  total.norm = norms ? std::sqrt(norm2) : -1;
  return total;
}

}  // namespace

void Session::setAdapterProbes(const Adapter& a, double thetaMin, double thetaCurrent) {
  if (a.direction == Direction::Gradients) pipeline_->gradientExchange()->setProbes(a.base, thetaMin, thetaCurrent);
  else pipeline_->link(a.boundary).setProbes(a.direction, a.base, thetaMin, thetaCurrent);
}

void Session::setupAdapters(int64_t step, double wall) {
  adapters_.clear();
  std::vector<std::pair<int, Direction>> places;
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b)
    for (Direction d : {Direction::Forward, Direction::Backward}) places.emplace_back(b, d);
  if (pipeline_->gradientExchange()) places.emplace_back(-1, Direction::Gradients);
  for (const auto& [b, d] : places) {
    const CompressionOptions& o = optionsOf(config_, b, d);
    Adapter a{b, d, o, nullptr, nullptr};
    setAdapterProbes(a, 0, 0);
    if (d == Direction::Gradients) pipeline_->gradientExchange()->measureNorm(false);
    else pipeline_->link(b).measureNorm(d, false);
    if (o.adapt == "none") continue;
    const AdaptOptions options = adaptOptions(o);
    if (o.adapt == "gravac") {
      a.gravac = std::make_unique<GravacController>(options);
      setAdapterProbes(a, o.theta_min, a.gravac->exploring());
      adapters_.push_back(std::move(a));
      // GraVAC sends θ_min while its first window of measurements comes in.
      if (o.k != o.theta_min)
        applyAdaptiveK(b, d, o.theta_min, "gravac", "GraVAC starts at theta_min for its first window", step, wall);
    } else {
      a.accordion = std::make_unique<AccordionController>(options);
      if (d == Direction::Gradients) pipeline_->gradientExchange()->measureNorm(true);
      else pipeline_->link(b).measureNorm(d, true);
      adapters_.push_back(std::move(a));
    }
  }
}

void Session::adapt(const StepRecord& rec) {
  if (adapters_.empty()) return;
  const double seconds = rec.emulated_step_s > 0 ? rec.emulated_step_s : rec.step_s;
  for (Adapter& a : adapters_) {
    const auto t = trafficFor(rec, a.boundary, a.direction);
    if (!t) continue;
    AdaptObservation o;
    o.gain_min = t->gain_min;
    o.gain_current = t->gain_current;
    o.samples_per_s = seconds > 0 ? double(rec.samples) / seconds : 0;
    o.norm = t->norm;
    if (a.gravac) {
      if (o.gain_min < 0 || o.gain_current < 0) continue;  // no message crossed this step
      const auto decision = a.gravac->observe(o);
      if (!decision) continue;
      setAdapterProbes(a, a.base.theta_min, decision->explore);
      const double k = decision->dense ? 1.0 : decision->k;  // dense: the sparsifier keeps everything
      applyAdaptiveK(a.boundary, a.direction, k, "gravac", decision->reason, rec.step, rec.wall_s);
    } else if (const auto decision = a.accordion->observe(o)) {
      applyAdaptiveK(a.boundary, a.direction, decision->k, "accordion", decision->reason, rec.step, rec.wall_s);
    }
  }
}

void Session::applyAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                             int64_t step, double wall) {
  const std::string key = kKey(boundary, d);
  const double old = optionsOf(config_, boundary, d).k;
  if (old == k) {  // a decision that keeps the factor (GraVAC settling on the one it sends): on the timeline
    bus_.publish(EventRecord{step, wall, "adapt", {{"key", key}, {"k", k}, {"source", source}, {"reason", reason}}});
    return;
  }
  nlohmann::json next = config_.json;
  setConfigValue(next, key, k);
  replaceConfig(Config::fromJson(next, source));
  if (d == Direction::Gradients) pipeline_->gradientExchange()->setOptions(config_.compression.gradients);
  else pipeline_->link(boundary).setOptions(d, optionsOf(config_, boundary, d));
  bus_.publish(EventRecord{step, wall, "setting",
                           {{"key", key}, {"from", old}, {"to", k}, {"source", source}, {"reason", reason}}});
}

}  // namespace ps
