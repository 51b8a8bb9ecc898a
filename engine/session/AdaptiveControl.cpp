#include "engine/session/AdaptiveControl.h"

#include "engine/compress/spec/Catalogue.h"

#include <algorithm>
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

// The step's traffic for an adapter: a link direction, or every stage's gradient exchange combined (the measurements
// are sums over all the tensors of the exchange).
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

AdaptiveControl::AdaptiveControl(const Config& settings, Pipeline& pipeline, TelemetryBus& bus, RunHooks hooks)
    : settings_(settings), pipeline_(pipeline), bus_(bus), hooks_(std::move(hooks)) {}

bool AdaptiveControl::reconfiguredBy(const std::string& option) {
  if (option == "adapt" || option == "method" || option == "k") return true;
  const auto& controllers = catalogue::controllers();
  return std::any_of(controllers.begin(), controllers.end(), [&](const MethodSpec& m) { return m.reads(option); });
}

void AdaptiveControl::setup(int64_t step, double wall) {
  adapters_.clear();
  std::vector<std::pair<int, Direction>> places;
  for (int b = 0; b + 1 < settings_.pipeline.stages; ++b)
    for (Direction d : {Direction::Forward, Direction::Backward}) places.emplace_back(b, d);
  if (pipeline_.gradientExchange()) places.emplace_back(-1, Direction::Gradients);
  for (const auto& [b, d] : places) {
    const CompressionOptions& o = settings_.compression.of(b, d);
    // The sender measures the norm of what crossed only for a controller that watches it.
    if (d == Direction::Gradients) pipeline_.gradientExchange()->measureNorm(o.adaptsOnNorm());
    else pipeline_.link(b).measureNorm(d, o.adaptsOnNorm());
    Adapter a{b, d, makeController(adaptOptions(o))};
    if (!a.controller) continue;  // K stays as configured
    const auto start = a.controller->start();
    adapters_.push_back(std::move(a));
    if (start) apply(b, d, *start, step, wall);
  }
}

void AdaptiveControl::observe(const StepRecord& rec) {
  if (adapters_.empty()) return;
  // The emulated step time is the same on every rank (it comes from the merged step report); a rank's own wall time
  // is not, and decisions must be the same everywhere. Without it, no throughput is credited this step.
  const double seconds = rec.emulated_step_s;
  for (Adapter& a : adapters_) {
    const auto t = trafficFor(rec, a.boundary, a.direction);
    if (!t) continue;
    if (t->messages == 0) continue;  // nothing crossed this step
    AdaptObservation o;
    o.samples_per_s = seconds > 0 ? double(rec.samples) / seconds : 0;
    o.measures = t->measures;
    if (const auto decision = a.controller->observe(o))
      apply(a.boundary, a.direction, *decision, rec.step, rec.wall_s);
  }
}

void AdaptiveControl::apply(int boundary, Direction d, const AdaptDecision& decision, int64_t step, double wall) {
  const CompressionOptions& o = settings_.compression.of(boundary, d);
  const std::string source = o.adapt;  // a copy: recording the decision replaces the settings `o` is part of
  if (o.adaptsWithOwnCompressors()) {
    applySelection(boundary, d, decision, source, step, wall);
    return;
  }
  // A new K: the direction's compressor is rebuilt with it.
  if (!recordK(boundary, d, decision.k, source, decision.reason, nlohmann::json::object(), step, wall)) return;
  if (d == Direction::Gradients)
    pipeline_.gradientExchange()->setOptions(settings_.compression.gradients);  // reports its resets with its traffic
  else
    hooks_.retarget(boundary, d, step, wall);
}

void AdaptiveControl::applySelection(int boundary, Direction d, const AdaptDecision& decision,
                                     const std::string& source, int64_t step, double wall) {
  // The sender switches payloads and retargets its current compressor; both residuals live on.
  if (d == Direction::Gradients)
    pipeline_.gradientExchange()->applyDecision(decision);
  else
    pipeline_.link(boundary).applyDecision(d, decision);
  nlohmann::json detail = {{"send", decision.send == GravacSend::Dense      ? "dense"
                                    : decision.send == GravacSend::ThetaMin ? "theta_min"
                                                                            : "current"},
                           {"explore", decision.explore}};
  recordK(boundary, d, decision.k, source, decision.reason, detail, step, wall);
}

bool AdaptiveControl::recordK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
                              nlohmann::json detail, int64_t step, double wall) {
  const std::string key = Config::Compression::key(boundary, d, "k");
  const double old = settings_.compression.of(boundary, d).k;
  detail["key"] = key;
  detail["source"] = source;
  detail["reason"] = reason;
  if (old == k) {  // a decision that keeps the factor sent (GraVAC exploring or settling): on the timeline
    detail["k"] = k;
    bus_.publish(EventRecord{step, wall, eventName(EventKind::Adapt), detail});
    return false;
  }
  hooks_.setK(key, k, source);
  detail["from"] = old;
  detail["to"] = k;
  bus_.publish(EventRecord{step, wall, eventName(EventKind::Setting), detail});
  return true;
}

}  // namespace ps
