#include "engine/session/RunBuilder.h"

#include "engine/compress/Compensation.h"
#include "engine/models/StageCutter.h"
#include "engine/runs/config/ConfigChecks.h"
#include "engine/session/Checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <unistd.h>  // gethostname

namespace ps {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The steps of building one run, over the configuration and the ranks it is built for.
class Builder {
 public:
  Builder(const Config& config, RankCoordinator& ranks) : config_(config), ranks_(ranks) {}
  BuiltRun build();

 private:
  std::vector<size_t> stageStarts(BlockModel& model);
  void placeStages(PipelineOptions& o);
  struct RankPlace {
    std::string where;  // "host/0000:3B:00.0"
    bool nccl = false;  // on a GPU, and NCCL is there
  };
  std::vector<RankPlace> rankPlaces(const PipelineOptions& o) const;
  json checkAqsgdMemory(BlockModel& model, const std::vector<size_t>& starts,
                        const std::vector<std::shared_ptr<Bottleneck>>& bottlenecks);
  std::vector<std::shared_ptr<Bottleneck>> makeBottlenecks(BlockModel& model, const std::vector<size_t>& starts);

  const Config& config_;
  RankCoordinator& ranks_;
  TaskData data_;
};

std::vector<size_t> Builder::stageStarts(BlockModel& model) {
  const auto& p = config_.pipeline;
  if (p.balance == "explicit") return explicitCuts(p.cuts, model.size(), p.stages);
  std::vector<double> cost(model.size());
  if (p.balance == "params" || p.stages == 1) {
    for (size_t b = 0; b < model.size(); ++b) cost[b] = double(model.parameterCount(b)) + 1.0;
  } else {
    // Measured compute: forward + backward of every block on one micro-batch, best of three.
    const int64_t mb = std::max<int64_t>(1, config_.train.batch_size / p.microbatches);
    for (int rep = 0; rep < 3; ++rep) {
      torch::Tensor h = data_.train_x.slice(0, 0, mb);
      for (size_t b = 0; b < model.size(); ++b) {
        auto input = h.is_floating_point() ? h.detach().requires_grad_(true) : h;
        const auto t0 = Clock::now();
        auto out = model.blocks[b].forward<torch::Tensor>(input);
        out.sum().backward();
        const double t = std::chrono::duration<double>(Clock::now() - t0).count();
        cost[b] = rep == 0 ? t : std::min(cost[b], t);
        h = out.detach();
      }
    }
    for (size_t b = 0; b < model.size(); ++b)
      for (auto& param : model.blocks[b].ptr()->parameters()) param.mutable_grad() = torch::Tensor();
  }
  return balanceCuts(cost, p.stages);
}

BuiltRun Builder::build() {
  BuiltRun run;
  ranks_.connect(config_);  // before any data is loaded: the other ranks are waiting
  run.threadsPerStage = ranks_.threadsPerStage(config_);
  const std::string& init = config_.model.init_checkpoint;
  data_ = loadTaskData(config_,
                       init.empty() || taskKind(config_.task) != TaskKind::LanguageModel ? "" : checkpointVocab(init));
  BlockModel model = buildModel(config_, data_.shape, config_.train.seed);
  if (!init.empty()) loadCheckpoint(init, model);

  PipelineOptions o;
  o.starts = ranks_.agreeOnCuts(stageStarts(model), model.size(), config_.pipeline.stages);
  o.cluster = ranks_.cluster();
  o.gradients = config_.compression.gradients;
  o.microbatches = config_.pipeline.microbatches;
  o.schedule = config_.pipeline.schedule;
  o.link = config_.link;
  o.forward = config_.compression.boundary_forward;
  o.backward = config_.compression.boundary_backward;
  o.optimizer = {config_.train.optimizer, config_.train.lr, config_.train.momentum, config_.train.weight_decay};
  o.seed = config_.train.seed;
  o.aqsgd = {config_.compression.aqsgd_warmup_epochs, data_.trainSize()};
  o.threads_per_stage = run.threadsPerStage;
  o.bottlenecks = makeBottlenecks(model, o.starts);
  if (!init.empty()) loadCheckpoint(init, o.bottlenecks);
  placeStages(o);
  const std::string& reads = config_.pipeline.device_reads;
  o.deferred_reads = reads == "step" || (reads == "auto" && !o.devices.empty() && o.devices.front().is_cuda());
  o.stage_streams = config_.pipeline.stage_streams;
  o.stream_check = config_.pipeline.stream_check;
  o.cuda_graphs = graphModeOf(config_.pipeline.cuda_graphs);
  run.aqsgdNote = checkAqsgdMemory(model, o.starts, o.bottlenecks);
  run.pipeline = std::make_unique<Pipeline>(std::move(model), std::move(o));

  const int64_t n = data_.trainSize();
  if (ranks_.active() && std::min<int64_t>(n, config_.train.batch_size) % config_.parallel.replicas != 0)
    throw ConfigError("the training set has " + std::to_string(n) + " samples, fewer than train.batch_size, and they " +
                      "do not split evenly over parallel.replicas = " + std::to_string(config_.parallel.replicas) +
                      "; use more samples or fewer replicas");
  run.stepsPerEpoch = std::max<int64_t>(1, n / std::min<int64_t>(n, config_.train.batch_size));
  run.totalSteps = config_.train.epochs > 0 ? config_.train.epochs * run.stepsPerEpoch : config_.train.max_steps;
  if (config_.train.max_steps > 0) run.totalSteps = std::min(run.totalSteps, config_.train.max_steps);
  run.data = std::move(data_);
  return run;
}

// The device of every stage (one GPU each, round robin, where the run asks for CUDA; a rank takes the GPU of its local
// rank), whether replicas reduce gradients over NCCL and whether payloads between stages travel through it. Every
// rank makes the same choices from what all of them report, and a refusal that rests on another rank's answer is
// made by every rank at once rather than leaving the others waiting for it.
void Builder::placeStages(PipelineOptions& o) {
  const bool cuda =
      config_.pipeline.device == "cuda" || (config_.pipeline.device == "auto" && torch::cuda::is_available());
  const int gpus = cuda ? int(torch::cuda::device_count()) : 0;
  if (cuda) {
    if (gpus == 0)
      throw ConfigError("pipeline.device = cuda but no CUDA device is visible; use pipeline.device=cpu or auto");
    for (int s = 0; s < config_.pipeline.stages; ++s)
      o.devices.emplace_back(torch::kCUDA, (ranks_.active() ? ranks_.localRank() : s) % gpus);
  }
  if (!ranks_.active()) return;  // only a multi-process run uses NCCL
  // Every rank's machine and GPU, and whether it could join an NCCL communicator.
  const std::vector<RankPlace> places = rankPlaces(o);
  std::string without;  // the first rank that could not
  std::vector<std::string> where;
  for (size_t r = 0; r < places.size(); ++r) {
    if (!places[r].nccl && without.empty()) without = "rank " + std::to_string(r) + " (" + places[r].where + ")";
    where.push_back(places[r].where);
  }
  const std::string sharing = NcclGroup::placementProblem(config_.pipeline.stages, where);
  const std::string linkSharing = NcclGroup::linkPlacementProblem(config_.pipeline.stages, where);
  const std::string& backend = config_.parallel.backend;
  if (backend == "nccl") {
    std::string why;
    if (!cuda)
      throw ConfigError(
          "parallel.backend = nccl reduces CUDA gradients, but the stages run on the CPU; set "
          "pipeline.device=cuda or parallel.backend=gloo");
    if (!NcclGroup::available(&why))
      throw ConfigError("parallel.backend = nccl: " + why + "; use parallel.backend=gloo");
    if (!without.empty())
      throw ConfigError("parallel.backend = nccl: " + without +
                        " has no CUDA device with NCCL; use parallel.backend=gloo");
    for (const std::string* problem : {&sharing, &linkSharing})
      if (!problem->empty())
        throw ConfigError("parallel.backend = nccl: " + *problem + "; use parallel.backend=gloo or more GPUs");
  }
  // `auto` takes NCCL where every rank can; several ranks sharing one GPU (a single-GPU machine) go through Gloo.
  // One choice for every rank: a replica on NCCL and another on Gloo would never meet.
  const bool nccl = without.empty() && backend != "gloo";
  o.nccl = ranks_.agreeOnFlag(nccl && sharing.empty());
  o.nccl_links = ranks_.agreeOnFlag(nccl && linkSharing.empty() && config_.pipeline.stages > 1);
  // Rank 0's choice for all: two ends of a link on different transports would never meet.
  o.gloo_links = ranks_.agreeOnFlag(config_.parallel.transport == "gloo");
}

// Where every rank runs, gathered from all of them: its machine and its stage's GPU by PCI bus id, which names one
// GPU whatever number CUDA_VISIBLE_DEVICES gives it ("host/0000:3B:00.0"; "host/cpu" on the CPU), and whether it
// can join an NCCL communicator. The reports of other ranks are checked as untrusted.
std::vector<Builder::RankPlace> Builder::rankPlaces(const PipelineOptions& o) const {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "rank %d", ranks_.rank());
  const size_t stage = size_t(ranks_.cluster()->stage());
  const bool cuda = stage < o.devices.size() && o.devices[stage].is_cuda();
  std::string device = cuda ? NcclGroup::busId(o.devices[stage].index()) : "cpu";
  if (device.empty()) device = o.devices[stage].str();
  const std::string mine = std::string(cuda && NcclGroup::available() ? "1" : "0") + host + "/" + device;
  std::vector<RankPlace> out;
  for (const auto& bytes : ranks_.cluster()->allGatherWorld({mine.begin(), mine.end()}, 512)) {
    if (bytes.empty() || (bytes[0] != '0' && bytes[0] != '1'))
      throw ClusterError("rank " + std::to_string(out.size()) + " sent a malformed report of where it runs");
    out.push_back({std::string(bytes.begin() + 1, bytes.end()), bytes[0] == '1'});
  }
  return out;
}

// The learned bottlenecks the boundaries' forward options ask for, sized by the activations that reach them: the
// first batch of the training set in the data's order passes through the model (every block in evaluation mode, so no
// running statistics move), and a bottleneck that starts from principal components takes them from what reaches it.
// Every rank and replica builds the same ones from the same data.
std::vector<std::shared_ptr<Bottleneck>> Builder::makeBottlenecks(BlockModel& model,
                                                                  const std::vector<size_t>& starts) {
  const auto& forward = config_.compression.boundary_forward;
  bool any = false;
  for (size_t s = 0; s + 1 < starts.size(); ++s) any = any || codesThroughLayers(forward[s]);
  if (!any) return {};
  torch::NoGradGuard noGrad;
  std::vector<bool> training;
  for (auto& block : model.blocks) {
    training.push_back(block.ptr()->is_training());
    block.ptr()->eval();
  }
  const int64_t rows = std::min<int64_t>({data_.trainSize(), std::max<int64_t>(1, config_.train.batch_size), 1024});
  torch::Tensor h = data_.train_x.slice(0, 0, rows);
  std::vector<std::shared_ptr<Bottleneck>> out(starts.size() - 1);
  for (size_t s = 0; s + 1 < starts.size(); ++s) {
    for (size_t b = starts[s]; b < starts[s + 1]; ++b) h = model.blocks[b].forward<torch::Tensor>(h);
    if (!codesThroughLayers(forward[s])) continue;
    auto sample = h.sizes().vec();
    sample.erase(sample.begin());
    out[s] = makeBottleneck(forward[s], int(s), sample, config_.train.seed);
    if (out[s]->init == "pca") initFromPrincipalComponents(*out[s], h);
    h = out[s]->decoder->forward(out[s]->encoder->forward(h));
  }
  for (size_t b = 0; b < model.size(); ++b) model.blocks[b].ptr()->train(training[b]);
  return out;
}

json Builder::checkAqsgdMemory(BlockModel& model, const std::vector<size_t>& starts,
                               const std::vector<std::shared_ptr<Bottleneck>>& bottlenecks) {
  bool any = false;
  for (const auto& f : config_.compression.boundary_forward) any = any || f.feedback == "aqsgd";
  if (!any) return json();
  // One sample through the model gives every boundary's activation size.
  torch::NoGradGuard noGrad;
  torch::Tensor h = data_.train_x.slice(0, 0, 1);
  double bytes = 0;
  json perBoundary = json::array();
  for (size_t s = 0; s + 1 < starts.size(); ++s) {
    for (size_t b = starts[s]; b < starts[s + 1]; ++b) h = model.blocks[b].forward<torch::Tensor>(h);
    const auto code = s < bottlenecks.size() ? bottlenecks[s] : nullptr;
    const torch::Tensor crossing = code ? code->encoder->forward(h) : h;  // a bottleneck's buffers hold its code
    if (code) h = code->decoder->forward(crossing);
    if (config_.compression.boundary_forward[s].feedback != "aqsgd") continue;
    const double need = 2 * Compensator::aqsgdBytes(data_.trainSize(), crossing.numel());  // both ends keep buffers
    bytes += need;
    perBoundary.push_back({{"boundary", s}, {"mb", need / 1e6}});
  }
  const double limit = config_.compression.aqsgd_memory_limit_mb * 1e6;
  char text[160];
  std::snprintf(text, sizeof text, "AQ-SGD buffers need %.1f MB (%lld samples, fp16, both ends of every link)",
                bytes / 1e6, (long long)data_.trainSize());
  json note = {{"text", text}, {"mb", bytes / 1e6}, {"boundaries", perBoundary}};
  if (bytes > limit)
    throw ConfigError(std::string(text) + ", above compression.aqsgd_memory_limit_mb = " +
                      std::to_string(int64_t(config_.compression.aqsgd_memory_limit_mb)) +
                      "; raise the limit, use fewer samples (data.train_limit) or another feedback");
  return note;
}

}  // namespace

json BuiltRun::graphsReport() const {
  json stages = json::array();
  for (int s = 0; s < pipeline->stages(); ++s)
    if (const StageGraphs* g = pipeline->graphs(s); g && g->mode() != GraphMode::Off)
      stages.push_back({{"stage", s},
                        {"replayed", g->replays()},
                        {"recorded", g->recordings()},
                        {"eager", g->eagerPasses()},
                        {"eager_because", g->reason()}});
  return stages.empty() ? json() : stages;
}

json BuiltRun::stagesDescription() const {
  json stages = json::array();
  for (int s = 0; s < pipeline->stages(); ++s) {
    const size_t first = pipeline->starts()[size_t(s)];
    const size_t last = s + 1 < pipeline->stages() ? pipeline->starts()[size_t(s) + 1] : pipeline->model().size();
    int64_t params = 0;
    json names = json::array();
    for (size_t b = first; b < last; ++b) {
      params += pipeline->model().parameterCount(b);
      names.push_back(pipeline->model().names[b]);
    }
    json stage{{"blocks", names}, {"parameters", params}};
    if (const StageGraphs* g = pipeline->graphs(s); g && g->mode() != GraphMode::Off)
      stage["cuda_graphs"] = g->enabled() ? "recorded from each micro-batch's second pass" : "eager: " + g->reason();
    stages.push_back(stage);
  }
  return stages;
}

BuiltRun buildRun(const Config& config, RankCoordinator& ranks) { return Builder(config, ranks).build(); }

}  // namespace ps
