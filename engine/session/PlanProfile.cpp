#include "engine/session/PlanProfile.h"

#include "engine/pipeline/Link.h"
#include "engine/session/RankCoordinator.h"
#include "engine/session/RunBuilder.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ps {

Config withoutCompression(const Config& config) {
  nlohmann::json j = config.json;  // the settings and their JSON stay one: runs are told apart by the JSON
  for (const char* key : {"forward", "backward", "boundaries"}) j["compression"].erase(key);
  return Config::fromJson(j, "the configuration without compression");
}

namespace {

// profileLinks(), with the steps before `skip` left out of the median (at least the first, which warms up; never all
// of them), and, where `errors` is given, each link direction's relative error over the steps kept.
LinkProfile trainProfile(Config config, int steps, int samples, int skip,
                         std::map<LinkDirection, double>* errors = nullptr) {
  if (steps < 1) throw std::invalid_argument("profile: at least 1 step, not " + std::to_string(steps));
  if (samples < 1)
    throw std::invalid_argument("profile: at least 1 message per link direction, not " + std::to_string(samples));
  config.parallel.replicas = 1;
  config.parallel.mode = "threads";
  config.run.checkpoint_file.clear(), config.run.save_checkpoint = false;
  RankCoordinator ranks;
  ranks.setOptions(ClusterOptions{});  // this process alone, whatever the environment says
  BuiltRun built = buildRun(config, ranks);
  Pipeline& pipeline = *built.pipeline;
  const int64_t batch = config.train.batch_size, n = built.data.trainSize();
  pipeline.setLearningRate(config.train.lr);
  LinkProfile out;
  out.threads_per_stage = built.threadsPerStage;
  out.steps_per_epoch = built.stepsPerEpoch;
  skip = std::min(std::max(skip, 1), steps - 1);
  std::vector<StepTrace> traces;  // the first step warms up (allocations, caches, a new thread's first pass)
  std::map<LinkDirection, std::pair<double, double>> squares;  // ||x_hat - x||^2, ||x||^2 over the steps kept
  for (int step = 1; step <= steps; ++step) {
    const bool last = step == steps;
    if (last)
      for (int b = 0; b + 1 < pipeline.stages(); ++b) pipeline.link(b).armSamples(samples);
    const auto index = torch::arange(int64_t(step - 1) * batch, int64_t(step) * batch, torch::kInt64).remainder(n);
    StepResult r = pipeline.step(built.data.train_x.index_select(0, index), built.data.train_y.index_select(0, index),
                                 step, 0, index);
    if (step <= skip) continue;
    traces.push_back(std::move(r.trace));
    for (const auto& t : r.traffic) {
      auto& [err, ref] = squares[{t.boundary, t.direction == Direction::Forward}];
      err += t.err_sq, ref += t.ref_sq;
    }
  }
  out.step = medianStep(traces);
  for (int b = 0; b + 1 < pipeline.stages(); ++b) {
    Link& link = pipeline.link(b);
    out.tensors[{b, true}] = link.takeSamples(Direction::Forward);
    out.tensors[{b, false}] = link.takeSamples(Direction::Backward);
    link.armSamples(0);
  }
  if (errors)
    for (const auto& [direction, sq] : squares)
      (*errors)[direction] = sq.second > 0 ? std::sqrt(sq.first / sq.second) : 0;
  return out;
}

}  // namespace

LinkProfile profileLinks(Config config, int steps, int samples) {
  return trainProfile(std::move(config), steps, samples, 1);
}

std::map<LinkDirection, MessageCost> measureSetting(const Config& config, const CompressionOptions& forward,
                                                    const CompressionOptions& backward, int steps) {
  nlohmann::json j = withoutCompression(config).json;
  j["compression"]["forward"] = forward.toJson();
  j["compression"]["backward"] = backward.toJson();
  return meanMessageCosts(profileLinks(Config::fromJson(j, "the setting measured"), steps, 1).step);
}

std::map<LinkDirection, CandidateMeasure> measureAqsgd(const Config& config, const CompressionOptions& forward,
                                                       int steps) {
  if (forward.feedback != "aqsgd")
    throw std::invalid_argument("aqsgd: the activations' setting has no AQ-SGD feedback (" + forward.method + ")");
  // A few batches over and over, compressed from a sample's second visit: from the third step on every sample of
  // two batches has been seen, and the steps before that are left out.
  constexpr int kBatches = 2;
  if (steps < kBatches + 2)
    throw std::invalid_argument("aqsgd: at least " + std::to_string(kBatches + 2) + " steps, not " +
                                std::to_string(steps));
  nlohmann::json j = withoutCompression(config).json;
  j["compression"]["forward"] = forward.toJson();
  j["compression"]["aqsgd_warmup_epochs"] = 0;
  j["data"]["train_limit"] = kBatches * config.train.batch_size;
  std::map<LinkDirection, double> errors;
  const LinkProfile p =
      trainProfile(Config::fromJson(j, "the AQ-SGD setting measured"), steps, 1, kBatches + 1, &errors);
  std::map<LinkDirection, CandidateMeasure> out;
  for (const auto& [direction, cost] : meanMessageCosts(p.step))
    if (direction.forward) out[direction] = {cost, errors.at(direction)};
  return out;
}

CandidateMeasure measureCandidate(const CompressionOptions& options, const LinkDirection& direction,
                                  const std::vector<torch::Tensor>& tensors, int threads, int rounds) {
  if (rounds < 2)
    throw std::invalid_argument("candidate: at least 2 rounds (one warms up), not " + std::to_string(rounds));
  if (threads < 1) throw std::invalid_argument("candidate: at least 1 thread, not " + std::to_string(threads));
  if (tensors.empty()) throw std::invalid_argument("candidate: no tensors of " + linkDirectionName(direction));
  if (options.feedback == "aqsgd")
    throw std::invalid_argument(
        "candidate: AQ-SGD keeps a buffer per training sample, so it is measured over "
        "training steps, not on captured tensors");
  Link::Settings settings;
  (direction.forward ? settings.forward : settings.backward) = options;
  settings.context.seed = 1;
  Link link(direction.boundary, LinkModel{}, settings);
  // A codec that splits its work over every core here would be credited with cores its stage worker never has.
  struct ThreadsFor {
    int before = at::get_num_threads();
    explicit ThreadsFor(int n) { at::set_num_threads(n); }
    ~ThreadsFor() { at::set_num_threads(before); }
  } stageThreads(threads);
  const Direction d = direction.forward ? Direction::Forward : Direction::Backward;
  CandidateMeasure out;
  double messages = 0;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      std::vector<TraceEvent> trace;
      const std::vector<int64_t> shape = tensors[i].sizes().vec();
      MessageMeta meta;
      meta.slot = int(i);
      double clock = 0;
      clock = link.send(d, tensors[i], clock, meta, &trace);
      meta.shape = &shape;
      (void)link.receive(d, torch::kCPU, clock, meta, &trace);
      if (round == 0) continue;
      out.cost.encode_s += trace.at(0).seconds;
      out.cost.bytes += double(trace.at(0).bytes);
      out.cost.decode_s += trace.at(1).seconds;
      messages += 1;
    }
    const LinkTraffic traffic = link.takeTraffic(d);
    out.relative_error = traffic.rel_error;
  }
  out.cost.encode_s /= messages, out.cost.decode_s /= messages, out.cost.bytes /= messages;
  return out;
}

}  // namespace ps
