// Adaptive compression in a session: GraVAC and Accordion controllers (engine/compress/Adaptive.h), one per link
// direction that asks for one, fed after every step and applied between steps. Each change of the factor a link
// sends is a "setting" event of the run (source "gravac" or "accordion", with the reason), so charts mark it like a
// manual change; a decision that keeps the factor (GraVAC settling on what it sends) is an "adapt" event. A factor
// change is written as the boundary's own key, compression.boundaries.N.<direction>.k.
#include "engine/session/Session.h"

#include <torch/torch.h>

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

}  // namespace

void Session::setupAdapters(int64_t step, double wall) {
  adapters_.clear();
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b) {
    Link& link = pipeline_->link(b);
    for (Direction d : {Direction::Forward, Direction::Backward}) {
      const CompressionOptions& o =
          (d == Direction::Forward ? config_.compression.boundary_forward : config_.compression.boundary_backward)[size_t(b)];
      link.setProbes(d, o, 0, 0);
      link.measureNorm(d, false);
      if (o.adapt == "none") continue;
      Adapter a{b, d, o, nullptr, nullptr};
      const AdaptOptions options = adaptOptions(o);
      if (o.adapt == "gravac") {
        a.gravac = std::make_unique<GravacController>(options);
        link.setProbes(d, o, o.theta_min, a.gravac->exploring());
        adapters_.push_back(std::move(a));
        // GraVAC sends θ_min while its first window of measurements comes in.
        if (o.k != o.theta_min)
          applyAdaptiveK(b, d, o.theta_min, "gravac", "GraVAC starts at theta_min for its first window", step, wall);
      } else {
        a.accordion = std::make_unique<AccordionController>(options);
        link.measureNorm(d, true);
        adapters_.push_back(std::move(a));
      }
    }
  }
}

void Session::adapt(const StepRecord& rec) {
  if (adapters_.empty()) return;
  const double seconds = rec.emulated_step_s > 0 ? rec.emulated_step_s : rec.step_s;
  for (Adapter& a : adapters_) {
    const LinkTraffic* t = nullptr;
    for (const auto& l : rec.links)
      if (l.boundary == a.boundary && l.direction == a.direction) t = &l;
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
      pipeline_->link(a.boundary).setProbes(a.direction, a.base, a.base.theta_min, decision->explore);
      const double k = decision->dense ? 1.0 : decision->k;  // dense: the sparsifier keeps everything
      applyAdaptiveK(a.boundary, a.direction, k, "gravac", decision->reason, rec.step, rec.wall_s);
    } else if (const auto decision = a.accordion->observe(o)) {
      applyAdaptiveK(a.boundary, a.direction, decision->k, "accordion", decision->reason, rec.step, rec.wall_s);
    }
  }
}

void Session::applyAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                             int64_t step, double wall) {
  auto& current = (d == Direction::Forward ? config_.compression.boundary_forward
                                           : config_.compression.boundary_backward)[size_t(boundary)];
  const std::string key =
      "compression.boundaries." + std::to_string(boundary) + "." + directionKey(d) + ".k";
  if (current.k == k) {  // a decision that keeps the factor (GraVAC settling on the one it sends): on the timeline
    bus_.publish(EventRecord{step, wall, "adapt", {{"key", key}, {"k", k}, {"source", source}, {"reason", reason}}});
    return;
  }
  const double old = current.k;
  nlohmann::json next = config_.json;
  setConfigValue(next, key, k);
  replaceConfig(Config::fromJson(next, source));
  Link& link = pipeline_->link(boundary);
  link.setOptions(d, (d == Direction::Forward ? config_.compression.boundary_forward
                                              : config_.compression.boundary_backward)[size_t(boundary)]);
  bus_.publish(EventRecord{step, wall, "setting",
                           {{"key", key}, {"from", old}, {"to", k}, {"source", source}, {"reason", reason}}});
}

}  // namespace ps
