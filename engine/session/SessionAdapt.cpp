// Adaptive compression in a session: the registered controllers (engine/compress/ControllerList.h: GraVAC, Accordion),
// one per link direction that asks for one, fed after every step and applied between steps. Each change of the factor a
// link sends is a "setting" event of the run (source: the controller's name, with the reason), so charts mark it like a
// manual change; a decision that keeps the factor sent (GraVAC exploring or settling) is an "adapt" event. A factor
// change is written as the boundary's own key, compression.boundaries.N.<direction>.k. GraVAC's decisions select a
// payload of the sender's two persistent compressors (no state is dropped); Accordion's rebuild the compressor. The
// weight gradients of data-parallel replicas have one controller for the whole model (compression.gradients.k), fed
// with the sums over every stage's exchange; every rank runs the same controllers on the same merged step result, so
// all ranks decide the same.
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

// The step's traffic for an adapter: a link direction, or every stage's gradient exchange combined (GraVAC's
// norms are sums over all the tensors of the exchange; Accordion's norm is the norm of all of them together).
std::optional<LinkTraffic> trafficFor(const StepRecord& rec, int boundary, Direction d) {
  if (d != Direction::Gradients) {
    for (const auto& l : rec.links)
      if (l.boundary == boundary && l.direction == d) return l;
    return std::nullopt;
  }
  std::vector<LinkTraffic> parts;
  for (const auto& l : rec.links)
    if (l.direction == d) parts.push_back(l);
  if (parts.empty()) return std::nullopt;
  return mergeTraffic(parts);
}

}  // namespace

void Session::setupAdapters(int64_t step, double wall) {
  adapters_.clear();
  std::vector<std::pair<int, Direction>> places;
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b)
    for (Direction d : {Direction::Forward, Direction::Backward}) places.emplace_back(b, d);
  if (pipeline_->gradientExchange()) places.emplace_back(-1, Direction::Gradients);
  for (const auto& [b, d] : places) {
    const CompressionOptions& o = optionsOf(config_, b, d);
    // The sender measures the norm of what crossed only for a controller that watches it.
    if (d == Direction::Gradients) pipeline_->gradientExchange()->measureNorm(o.adaptsOnNorm());
    else pipeline_->link(b).measureNorm(d, o.adaptsOnNorm());
    Adapter a{b, d, makeController(adaptOptions(o))};
    if (!a.controller) continue;  // K stays as configured
    const auto start = a.controller->start();
    adapters_.push_back(std::move(a));
    if (start) applyDecision(b, d, *start, step, wall);
  }
}

void Session::adapt(const StepRecord& rec) {
  if (adapters_.empty()) return;
  // The emulated step time is the same on every rank (it comes from the merged step report); a rank's own wall time
  // is not, and decisions must be the same everywhere. Without it, no throughput is credited this step.
  const double seconds = rec.emulated_step_s;
  for (Adapter& a : adapters_) {
    const auto t = trafficFor(rec, a.boundary, a.direction);
    if (!t) continue;
    if (t->messages == 0) continue;  // nothing crossed this step
    AdaptObservation o;
    o.norm_raw = t->gravac_norm_raw;
    o.norm_min = t->gravac_norm_min;
    o.norm_current = t->gravac_norm_current;
    o.samples_per_s = seconds > 0 ? double(rec.samples) / seconds : 0;
    o.norm = t->norm;
    if (const auto decision = a.controller->observe(o))
      applyDecision(a.boundary, a.direction, *decision, rec.step, rec.wall_s);
  }
}

void Session::applyDecision(int boundary, Direction d, const AdaptDecision& decision, int64_t step, double wall) {
  const CompressionOptions& o = optionsOf(config_, boundary, d);
  if (o.adaptsWithOwnCompressors()) applySelection(boundary, d, decision, o.adapt, step, wall);
  else applyAdaptiveK(boundary, d, decision.k, o.adapt, decision.reason, step, wall);
}

void Session::applySelection(int boundary, Direction d, const AdaptDecision& decision, const std::string& source,
                             int64_t step, double wall) {
  // The sender switches payloads and retargets its current compressor; both residuals live on.
  if (d == Direction::Gradients)
    pipeline_->gradientExchange()->applyDecision(decision);
  else
    pipeline_->link(boundary).applyDecision(d, decision);
  nlohmann::json detail = {{"send", decision.send == GravacSend::Dense      ? "dense"
                                    : decision.send == GravacSend::ThetaMin ? "theta_min"
                                                                            : "current"},
                           {"explore", decision.explore}};
  recordAdaptiveK(boundary, d, decision.k, source, decision.reason, detail, step, wall);
}

bool Session::recordAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                              nlohmann::json detail, int64_t step, double wall) {
  const std::string key = kKey(boundary, d);
  const double old = optionsOf(config_, boundary, d).k;
  detail["key"] = key;
  detail["source"] = source;
  detail["reason"] = reason;
  if (old == k) {  // a decision that keeps the factor sent (GraVAC exploring or settling): on the timeline
    detail["k"] = k;
    bus_.publish(EventRecord{step, wall, eventName(EventKind::Adapt), detail});
    return false;
  }
  nlohmann::json next = config_.json;
  setConfigValue(next, key, k);
  replaceConfig(Config::fromJson(next, source));
  detail["from"] = old;
  detail["to"] = k;
  bus_.publish(EventRecord{step, wall, eventName(EventKind::Setting), detail});
  return true;
}

void Session::retargetLink(int boundary, Direction d, int64_t step, double wall) {
  Link& link = pipeline_->link(boundary);
  const CompressionOptions& want = optionsOf(config_, boundary, d);
  if (link.options(d) == want || !link.setOptions(d, want)) return;
  bus_.publish(EventRecord{step, wall, eventName(EventKind::Reset),
                           nlohmann::json{{"boundary", boundary},
                                          {"direction", directionName(d)},
                                          {"reason", compressorChangedReset(link.describe(d))}}});
}

void Session::applyAdaptiveK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                             int64_t step, double wall) {
  if (!recordAdaptiveK(boundary, d, k, source, reason, nlohmann::json::object(), step, wall)) return;
  if (d == Direction::Gradients)
    pipeline_->gradientExchange()->setOptions(config_.compression.gradients);  // reports its resets with its traffic
  else
    retargetLink(boundary, d, step, wall);
}

}  // namespace ps
