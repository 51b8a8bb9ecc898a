#include "engine/session/Session.h"

#include "engine/models/StageCutter.h"
#include "engine/compress/Compensation.h"
#include "engine/runs/CodeVersion.h"
#include "engine/session/Checkpoint.h"
#include "engine/session/RunStoreSink.h"
#include "engine/session/Threads.h"
#include "engine/telemetry/StepReport.h"

#include <torch/torch.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>

namespace ps {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

bool changeableMidRun(const std::string& key) {
  return key.rfind("compression.", 0) == 0 || key.rfind("link.", 0) == 0 || key == "train.lr";
}

Session::Session(Config config, std::shared_ptr<RunStore> store) : config_(std::move(config)), store_(std::move(store)) {}

Session::~Session() { bus_.drain(); }

void Session::post(Command command) {
  if (command.kind == Command::Kind::Set) {
    if (!changeableMidRun(command.key))
      throw ConfigError(command.key + " cannot change during a run (only link.*, compression.* and train.lr can); "
                        "start a new run with the new value");
    const std::string leaf = command.key.substr(command.key.rfind('.') + 1);
    if (leaf == "feedback" && command.value == "aqsgd")
      throw ConfigError("AQ-SGD cannot be switched on during a run: its per-sample buffers are sized and checked "
                        "against compression.aqsgd_memory_limit_mb before the run starts; start a new run with " +
                        command.key + "=aqsgd");
    json probe;
    {
      std::lock_guard<std::mutex> lock(configMutex_);  // applySetting replaces config_ on the training thread
      probe = config_.json;
    }
    setConfigValue(probe, command.key, command.value);
    Config::fromJson(probe, "setting");  // validates the whole before it is queued
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

void Session::abortLaunchedRanks() noexcept {
  std::lock_guard<std::mutex> lock(launcherMutex_);
  if (launcher_) launcher_->killAll();
}

void Session::connectCluster() {
  ClusterOptions co = clusterSet_ ? clusterOptions_ : ClusterOptions::fromEnvironment();
  const int workers = config_.pipeline.stages * config_.parallel.replicas;
  if (!co.active() && config_.parallel.processes() && workers > 1) {
    // Start the other ranks here; this process is rank 0 (what `pipesqueeze-cli launch` and the app do).
    co = ClusterOptions{};
    co.world = co.local_world = workers;
    co.master_port = freeLoopbackPort();
    co.token = newStoreToken();
    auto launcher = std::make_unique<Launcher>(config_.json, workers, co.master_port, co.token);
    std::lock_guard<std::mutex> lock(launcherMutex_);
    launcher_ = std::move(launcher);
  }
  if (!co.active()) return;
  if (co.world != workers)  // before any data is loaded
    throw ConfigError("WORLD_SIZE = " + std::to_string(co.world) + " but the run has pipeline.stages = " +
                      std::to_string(config_.pipeline.stages) + " x parallel.replicas = " +
                      std::to_string(config_.parallel.replicas) + " = " + std::to_string(workers) +
                      " workers; start one process per stage and replica");
  co.timeout_s = config_.parallel.timeout_s;
  clusterOptions_ = co;
  clusterSet_ = true;
}

void Session::prepare() {
  connectCluster();
  // Every rank connects before loading data, so a launcher's port is taken at once and no rank's data loading
  // eats into another's connect timeout.
  if (clusterSet_ && clusterOptions_.active())
    cluster_ = std::make_shared<Cluster>(clusterOptions_, config_.pipeline.stages, config_.parallel.replicas);
  setStageThreads();
  const std::string& init = config_.model.init_checkpoint;
  data_ = loadTaskData(config_, init.empty() || config_.task != "brown_lm" ? "" : checkpointVocab(init));
  BlockModel model = buildModel(config_, data_.shape, config_.train.seed);
  if (!init.empty()) loadCheckpoint(init, model);

  PipelineOptions o;
  o.starts = stageStarts(model);
  if (cluster_) {
    o.starts = agreedStageCuts(o.starts, model.size());
    o.cluster = cluster_;
  }
  o.gradients = config_.compression.gradients;
  o.microbatches = config_.pipeline.microbatches;
  o.schedule = config_.pipeline.schedule;
  o.link = {config_.link.bandwidth_mbps, config_.link.latency_ms, config_.link.throttled};
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
  if (cluster_ && std::min<int64_t>(n, config_.train.batch_size) % config_.parallel.replicas != 0)
    throw ConfigError("the training set has " + std::to_string(n) + " samples, fewer than train.batch_size, and they " +
                      "do not split evenly over parallel.replicas = " + std::to_string(config_.parallel.replicas) +
                      "; use more samples or fewer replicas");
  stepsPerEpoch_ = std::max<int64_t>(1, n / std::min<int64_t>(n, config_.train.batch_size));
  totalSteps_ = config_.train.epochs > 0 ? config_.train.epochs * stepsPerEpoch_ : config_.train.max_steps;
  if (config_.train.max_steps > 0) totalSteps_ = std::min(totalSteps_, config_.train.max_steps);
}

// Threads per stage: the configured (or all) cores over the stages in this process.
void Session::setStageThreads() {
  if (clusterSet_ && clusterOptions_.active()) {  // one stage per process: those on this machine share its cores
    const int total = config_.train.threads > 0 ? int(config_.train.threads) : hardwareThreads();
    const int local = clusterOptions_.local_world > 0 ? clusterOptions_.local_world : clusterOptions_.world;
    threadsPerStage_ = configureThreads(std::max(1, total / local), 1);
  } else {
    threadsPerStage_ = configureThreads(int(config_.train.threads), config_.pipeline.stages);
  }
}

// Measured cuts differ between processes: rank 0's are everyone's, checked against this rank's model.
std::vector<size_t> Session::agreedStageCuts(const std::vector<size_t>& mine, size_t blocks) {
  std::vector<size_t> starts;
  const auto bytes =
      cluster_->broadcastWorld(cluster_->rank() == 0 ? json::to_cbor(json(mine)) : std::vector<uint8_t>{});
  try {
    starts = report::readCbor(bytes).get<std::vector<size_t>>();
  } catch (const std::exception& e) {
    throw ClusterError(std::string("rank 0 sent malformed stage cuts: ") + e.what());
  }
  bool valid = int(starts.size()) == config_.pipeline.stages && starts.front() == 0;
  for (size_t s = 1; valid && s < starts.size(); ++s) valid = starts[s] > starts[s - 1] && starts[s] < blocks;
  if (!valid)
    throw ClusterError("rank 0 sent stage cuts " + json(starts).dump() + " that do not cut this rank's " +
                       std::to_string(blocks) + " blocks into " + std::to_string(config_.pipeline.stages) + " stages");
  return starts;
}

// The device of every stage (one GPU each, round robin, where the run asks for CUDA) and whether replicas reduce
// gradients over NCCL; every rank makes the same choice.
void Session::placeStages(PipelineOptions& o) {
  const bool cuda =
      config_.pipeline.device == "cuda" || (config_.pipeline.device == "auto" && torch::cuda::is_available());
  const int gpus = cuda ? int(torch::cuda::device_count()) : 0;
  if (cuda) {
    if (gpus == 0)
      throw ConfigError("pipeline.device = cuda but no CUDA device is visible; use pipeline.device=cpu or auto");
    for (int s = 0; s < config_.pipeline.stages; ++s)
      o.devices.emplace_back(torch::kCUDA, (cluster_ ? cluster_->rank() : s) % gpus);
  }
  // Only a multi-process run reduces over NCCL, and only where every replica of a stage has a GPU of its own.
  const std::string sharing =
      cuda && cluster_ ? NcclGroup::placementProblem(config_.pipeline.stages, cluster_->replicas(), gpus) : "";
  const std::string& backend = config_.parallel.backend;
  if (backend == "nccl") {
    std::string why;
    if (!cuda)
      throw ConfigError(
          "parallel.backend = nccl reduces CUDA gradients, but the stages run on the CPU; set "
          "pipeline.device=cuda or parallel.backend=gloo");
    if (!NcclGroup::available(&why))
      throw ConfigError("parallel.backend = nccl: " + why + "; use parallel.backend=gloo");
    if (!sharing.empty())
      throw ConfigError("parallel.backend = nccl: " + sharing + "; use parallel.backend=gloo or more GPUs");
  }
  // `auto` takes NCCL where it can; several ranks sharing one GPU (a single-GPU machine) reduce over Gloo.
  o.nccl = cuda && cluster_ && sharing.empty() && (backend == "nccl" || (backend == "auto" && NcclGroup::available()));
  if (cluster_) {  // one choice for every rank: a replica on NCCL and another on Gloo would never meet
    const auto choice = cluster_->broadcastWorld({uint8_t(o.nccl ? 1 : 0)});
    o.nccl = !choice.empty() && choice[0] == 1;
  }
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
  replaceConfig(Config::fromJson(next, "setting"));
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b) {
    Link& link = pipeline_->link(b);
    link.setModel({config_.link.bandwidth_mbps, config_.link.latency_ms, config_.link.throttled});
    for (Direction d : {Direction::Forward, Direction::Backward}) {
      const auto& want = (d == Direction::Forward ? config_.compression.boundary_forward
                                                  : config_.compression.boundary_backward)[size_t(b)];
      if (link.options(d) == want) continue;
      const bool stateful = link.options(d).feedback != "none" || link.options(d).adaptsWithOwnCompressors();
      link.setOptions(d, want);
      if (stateful)
        bus_.publish(EventRecord{step, wall, "reset",
                                 json{{"boundary", b}, {"direction", directionName(d)},
                                      {"reason", "compensation state reset: the compressor changed to " +
                                                     link.describe(d)}}});
    }
  }
  if (GradientExchange* g = pipeline_->gradientExchange()) {  // resets are reported with its traffic
    g->setModel({config_.link.bandwidth_mbps, config_.link.latency_ms, config_.link.throttled});
    if (g->options() != config_.compression.gradients) g->setOptions(config_.compression.gradients);
  }
  bus_.publish(EventRecord{step, wall, "setting", json{{"key", c.key}, {"from", old}, {"to", c.value}}});
  static const std::vector<std::string> adaptive = {"adapt",   "theta_min", "theta_max", "adapt_policy", "epsilon",
                                                    "omega",   "window",    "eta",       "method",       "k"};
  const std::string leaf = c.key.substr(c.key.rfind('.') + 1);
  if (c.key.rfind("compression.", 0) == 0 && std::find(adaptive.begin(), adaptive.end(), leaf) != adaptive.end())
    setupAdapters(step, wall);
}

// The pause and resume of a turn are events of the run.
void Session::announce(const CommandQueue::Turn& turn, int64_t step, double wall) {
  for (Command::Kind k : turn.transitions)
    k == Command::Kind::Pause ? bus_.publish(EventRecord{step, wall, "pause", json::object()})
                              : bus_.publish(EventRecord{step, elapsed(), "resume", json::object()});
}

bool Session::handleClusterCommands(int64_t step, double wall) {
  // Rank 0 owns the command queue; every step it sends every rank what to do, so all ranks change settings,
  // pause and stop at the same step. While paused it repeats the message, which keeps the others from timing out.
  const bool root = cluster_->rank() == 0;
  for (;;) {
    json control;
    if (root) {
      const CommandQueue::Turn turn = commands_.take();
      announce(turn, step, wall);
      json sets = json::array();
      for (const auto& c : turn.sets) sets.push_back({c.key, c.value});
      control = {{"stop", turn.stop}, {"paused", turn.paused}, {"sets", sets}};
    }
    const auto bytes = cluster_->broadcastWorld(root ? json::to_cbor(control) : std::vector<uint8_t>{});
    std::vector<Command> sets;
    bool stop = false, paused = false;
    try {
      control = report::readCbor(bytes);
      for (const auto& s : control.at("sets")) sets.push_back(Command::set(s.at(0), s.at(1)));
      stop = control.at("stop").get<bool>(), paused = control.at("paused").get<bool>();
    } catch (const std::exception& e) {
      throw ClusterError(std::string("rank 0 sent malformed commands: ") + e.what());
    }
    for (const auto& c : sets) applySetting(c, step, wall);
    commands_.follow(stop, paused);
    if (stop) return false;
    if (!paused) return true;
    if (root) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

bool Session::handleCommands(int64_t step, double wall) {
  if (cluster_) return handleClusterCommands(step, wall);
  for (;;) {
    const CommandQueue::Turn turn = commands_.take();
    announce(turn, step, wall);
    for (const auto& c : turn.sets) applySetting(c, step, wall);
    if (turn.stop) return false;
    if (!turn.paused) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
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
    EvalResult total;
    for (int64_t i = 0; i < batches; ++i) {
      auto r = pipeline_->evaluate(data_.eval_x.slice(0, i * bs, std::min(n, (i + 1) * bs)),
                                   data_.eval_y.slice(0, i * bs, std::min(n, (i + 1) * bs)), compressed);
      total.loss_sum += r.loss_sum;
      total.correct += r.correct;
      total.predictions += r.predictions;
      total.samples += r.samples;
    }
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
