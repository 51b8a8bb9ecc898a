#include "engine/session/Session.h"
#include "engine/core/Metrics.h"

#include "engine/compress/Compensation.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/core/CodeVersion.h"
#include "engine/models/StageCutter.h"
#include "engine/session/Checkpoint.h"
#include "engine/session/RunStoreSink.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>

#include <unistd.h>  // gethostname

namespace ps {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Whether a change of this compression option changes what the adaptive controllers do: which controller, the codec
// or K they adapt, or an option any controller reads (the catalogue's lists).
bool reconfiguresControllers(const std::string& option) {
  if (option == "adapt" || option == "method" || option == "k") return true;
  const auto& controllers = catalogue::controllers();
  return std::any_of(controllers.begin(), controllers.end(), [&](const MethodSpec& m) { return m.reads(option); });
}

}  // namespace

bool changeableMidRun(const std::string& key) {
  return key.rfind("compression.", 0) == 0 || key.rfind("link.", 0) == 0 || key == "train.lr";
}

Session::Session(Config config, std::shared_ptr<RunStore> store) : config_(std::move(config)), store_(std::move(store)) {}

Session::~Session() { bus_.drain(); }

void Session::post(Command command) {
  if (command.kind == Command::Kind::Set) {
    if (!changeableMidRun(command.key))
      throw ConfigError(command.key +
                        " cannot change during a run (only link.*, compression.* and train.lr can); "
                        "start a new run with the new value");
    const std::string leaf = command.key.substr(command.key.rfind('.') + 1);
    const MethodSpec* compensation = leaf == "feedback" && command.value.is_string()
                                         ? catalogue::compensation(command.value.get<std::string>())
                                         : nullptr;
    if (compensation && !compensation->onlyAtStart.empty())
      throw ConfigError(compensation->label + " cannot be switched on during a run: " + compensation->onlyAtStart +
                        "; start a new run with " + command.key + "=" + compensation->name);
    // Checked with the settings queued before it, as they will apply: together, at the next step. What the training
    // thread then applies was checked here, so a combination cannot fail the run there.
    std::lock_guard<std::mutex> lock(configMutex_);  // applySetting replaces config_ on the training thread
    json probe = config_.json;
    for (const Command& queued : queuedSets_) setConfigValue(probe, queued.key, queued.value);
    setConfigValue(probe, command.key, command.value);
    Config::fromJson(probe, "setting");
    queuedSets_.push_back(command);
    commands_.push(std::move(command));
    return;
  }
  commands_.push(std::move(command));
}

double Session::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double Session::learningRate(int64_t step) const {
  const auto& t = config_.train;
  double lr = t.lr;
  if (t.warmup_steps > 0 && step <= t.warmup_steps) lr *= double(step) / double(t.warmup_steps);
  if (t.lr_schedule == "cosine" && totalSteps_ > 0)
    lr *= 0.5 * (1.0 + std::cos(M_PI * double(std::min(step, totalSteps_)) / double(totalSteps_)));
  return lr;
}

std::vector<size_t> Session::stageStarts(BlockModel& model) {
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

void Session::prepare() {
  ranks_.connect(config_);  // before any data is loaded: the other ranks are waiting
  threadsPerStage_ = ranks_.threadsPerStage(config_);
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
  o.threads_per_stage = threadsPerStage_;
  placeStages(o);
  checkAqsgdMemory(model, o.starts);
  pipeline_ = std::make_unique<Pipeline>(std::move(model), std::move(o));

  const int64_t n = data_.trainSize();
  if (ranks_.active() && std::min<int64_t>(n, config_.train.batch_size) % config_.parallel.replicas != 0)
    throw ConfigError("the training set has " + std::to_string(n) + " samples, fewer than train.batch_size, and they " +
                      "do not split evenly over parallel.replicas = " + std::to_string(config_.parallel.replicas) +
                      "; use more samples or fewer replicas");
  stepsPerEpoch_ = std::max<int64_t>(1, n / std::min<int64_t>(n, config_.train.batch_size));
  totalSteps_ = config_.train.epochs > 0 ? config_.train.epochs * stepsPerEpoch_ : config_.train.max_steps;
  if (config_.train.max_steps > 0) totalSteps_ = std::min(totalSteps_, config_.train.max_steps);
}

// The device of every stage (one GPU each, round robin, where the run asks for CUDA; a rank takes the GPU of its local
// rank), whether replicas reduce gradients over NCCL and whether payloads between stages travel through it. Every
// rank makes the same choices from what all of them report, and a refusal that rests on another rank's answer is
// made by every rank at once rather than leaving the others waiting for it.
void Session::placeStages(PipelineOptions& o) {
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
std::vector<Session::RankPlace> Session::rankPlaces(const PipelineOptions& o) const {
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

void Session::checkAqsgdMemory(BlockModel& model, const std::vector<size_t>& starts) {
  bool any = false;
  for (const auto& f : config_.compression.boundary_forward) any = any || f.feedback == "aqsgd";
  if (!any) return;
  // One sample through the model gives every boundary's activation size.
  torch::NoGradGuard noGrad;
  torch::Tensor h = data_.train_x.slice(0, 0, 1);
  double bytes = 0;
  json perBoundary = json::array();
  for (size_t s = 0; s + 1 < starts.size(); ++s) {
    for (size_t b = starts[s]; b < starts[s + 1]; ++b) h = model.blocks[b].forward<torch::Tensor>(h);
    if (config_.compression.boundary_forward[s].feedback != "aqsgd") continue;
    const double need = 2 * Compensator::aqsgdBytes(data_.trainSize(), h.numel());  // both ends keep buffers
    bytes += need;
    perBoundary.push_back({{"boundary", s}, {"mb", need / 1e6}});
  }
  const double limit = config_.compression.aqsgd_memory_limit_mb * 1e6;
  char text[160];
  std::snprintf(text, sizeof text, "AQ-SGD buffers need %.1f MB (%lld samples, fp16, both ends of every link)",
                bytes / 1e6, (long long)data_.trainSize());
  aqsgdNote_ = {{"text", text}, {"mb", bytes / 1e6}, {"boundaries", perBoundary}};
  if (bytes > limit)
    throw ConfigError(std::string(text) + ", above compression.aqsgd_memory_limit_mb = " +
                      std::to_string(int64_t(config_.compression.aqsgd_memory_limit_mb)) +
                      "; raise the limit, use fewer samples (data.train_limit) or another feedback");
}

void Session::replaceConfig(Config next) {
  std::lock_guard<std::mutex> lock(configMutex_);  // post() reads config_ from other threads
  config_ = std::move(next);
}

void Session::applySetting(const Command& c, int64_t step, double wall) {
  const json old = configValue(config_.json, c.key);
  json next = config_.json;
  setConfigValue(next, c.key, c.value);
  Config applied = Config::fromJson(next, "setting");
  {
    std::lock_guard<std::mutex> lock(configMutex_);
    config_ = std::move(applied);
    if (!queuedSets_.empty()) queuedSets_.pop_front();  // this one (on other ranks the sets come from rank 0's)
  }
  pipeline_->setLinkModel(config_.link);
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b)
    for (Direction d : {Direction::Forward, Direction::Backward}) retargetLink(b, d, step, wall);
  if (GradientExchange* g = pipeline_->gradientExchange()) {  // resets are reported with its traffic
    if (g->options() != config_.compression.gradients) g->setOptions(config_.compression.gradients);
  }
  bus_.publish(
      EventRecord{step, wall, eventName(EventKind::Setting), json{{"key", c.key}, {"from", old}, {"to", c.value}}});
  const std::string option = c.key.substr(c.key.rfind('.') + 1);
  if (c.key.rfind("compression.", 0) == 0 && reconfiguresControllers(option)) setupAdapters(step, wall);
}

// The pause and resume of a turn are events of the run, at the time the turn was taken.
void Session::announce(const CommandQueue::Turn& turn, int64_t step, double wall) {
  for (Command::Kind k : turn.transitions)
    bus_.publish(EventRecord{step, wall, eventName(k == Command::Kind::Pause ? EventKind::Pause : EventKind::Resume),
                             json::object()});
}

// In a multi-process run rank 0 takes the turn and every rank gets its outcome, so all ranks change settings, pause
// and stop at the same step; while paused, rank 0 repeats it, which keeps the others from timing out.
bool Session::handleCommands(int64_t step) {
  const bool taker = ranks_.rank() == 0;
  commandSeconds_ = 0;
  for (;;) {
    const double wall = elapsed();  // every turn's events carry its own time: a paused run's turns come later
    CommandQueue::Turn turn;
    if (taker) {
      turn = commands_.take();
      announce(turn, step, wall);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const RankCoordinator::Commands shared = ranks_.shareCommands(turn);
    commandSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& c : shared.sets) applySetting(c, step, wall);
    if (ranks_.active()) commands_.follow(shared.stop, shared.paused);
    if (shared.stop) return false;
    if (!shared.paused) return true;
    if (taker) std::this_thread::sleep_for(std::chrono::milliseconds(ranks_.active() ? 200 : 20));
  }
}

void Session::evaluate(Progress& p) {
  const int64_t n = data_.evalSize(), bs = config_.eval.batch_size;
  const int64_t batches = config_.eval.max_batches > 0 ? std::min(config_.eval.max_batches, (n + bs - 1) / bs)
                                                       : (n + bs - 1) / bs;
  // Identity links change nothing: one pass serves both figures.
  bool lossless = true;
  for (int b = 0; b + 1 < pipeline_->stages(); ++b) lossless = lossless && pipeline_->link(b).lossless();
  for (bool compressed : {true, false}) {
    if (!compressed && lossless) {
      EvalRecord plain = *p.evalCompressed;
      plain.compressed = false;
      p.evalPlain = plain;
      bus_.publish(plain);
      break;
    }
    const int64_t rows = std::min(n, batches * bs);
    const EvalResult total =
        pipeline_->evaluate(data_.eval_x.slice(0, 0, rows), data_.eval_y.slice(0, 0, rows), bs, compressed);
    EvalRecord e;
    e.step = p.step;
    e.wall_s = elapsed();
    e.emulated_s = p.emulated;
    e.compressed = compressed;
    e.samples = total.samples;
    e.loss = total.samples ? total.loss_sum / double(total.samples) : 0.0;
    if (pipeline_->kind() == TaskKind::Classifier) e.accuracy = double(total.correct) / double(std::max<int64_t>(1, total.predictions));
    else e.perplexity = std::exp(e.loss);
    (compressed ? p.evalCompressed : p.evalPlain) = e;
    bus_.publish(e);
  }
}

}  // namespace ps
