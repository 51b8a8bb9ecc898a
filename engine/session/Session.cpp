#include "engine/session/Session.h"
#include "engine/core/RunSummary.h"

#include "engine/core/CodeVersion.h"
#include "engine/core/Metrics.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/errors/DivergedError.h"
#include "engine/runs/config/ConfigChecks.h"
#include "engine/session/Checkpoint.h"
#include "engine/session/RunStoreSink.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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
    const Config next = Config::fromJson(probe, "setting");
    if (const std::string why = bottleneckChange(config_.compression, next.compression, codeFeatures_); !why.empty())
      throw ConfigError(command.key + " cannot change during a run: " + why + "; start a new run with " + command.key +
                        "=" + (command.value.is_string() ? command.value.get<std::string>() : command.value.dump()));
    queuedSets_.push_back(command);
    commands_.push(std::move(command));
    return;
  }
  commands_.push(std::move(command));
}

json Session::run() {
  start_ = Clock::now();
  built_ = buildRun(config_, ranks_);  // configuration and data errors propagate: nothing has been recorded yet
  {
    std::lock_guard<std::mutex> lock(configMutex_);
    for (int b = 0; b + 1 < built_.pipeline->stages(); ++b)
      codeFeatures_.push_back(built_.pipeline->bottleneckFeatures(b));
  }
  adaptive_ = std::make_unique<AdaptiveControl>(
      config_, *built_.pipeline, bus_,
      AdaptiveControl::RunHooks{
          [this](const std::string& key, double k, const std::string& source) { setValue(key, k, source); },
          [this](int boundary, Direction d, int64_t step, double wall) { retargetLink(boundary, d, step, wall); }});
  openRun();
  RunProgress p;
  std::mt19937_64 shuffleRng(config_.train.seed ^ 0x5eed5eedULL);
  const int64_t n = built_.data.trainSize();
  const int64_t batch = std::min<int64_t>(n, config_.train.batch_size);
  std::vector<int64_t> order(static_cast<size_t>(n));
  try {
    adaptive_->setup(0, elapsed());  // inside the try: a controller that refuses its options fails the run, recorded
    while (p.step < built_.totalSteps) {
      if (p.step % built_.stepsPerEpoch == 0) {  // a new epoch: a new order of the samples
        p.epoch = p.step / built_.stepsPerEpoch;
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), shuffleRng);
      }
      ranks_.injectFault(p.step + 1);
      if (!handleCommands(p.step)) {
        if (const std::string why = storeFailure(); !why.empty()) {
          p.status = run_status::kFailed;
          p.reason = "the run store failed before step " + std::to_string(p.step + 1) + ": " + why;
        } else {
          p.status = run_status::kStopped;
          p.reason = "stopped by the user at step " + std::to_string(p.step);
        }
        break;
      }
      if (!trainStep(p, order, batch)) break;
      if (config_.eval.every_steps > 0 && p.step % config_.eval.every_steps == 0 && p.step < built_.totalSteps) {
        evaluate(p);
        if (reachedTarget(p)) break;  // every rank has the same figures, so all of them end at this step
      }
    }
    finishTraining(p);
  } catch (const std::exception& e) {
    p.reason = ranks_.failureReason(e.what(), config_.parallel.timeout_s);
    // A rank whose values stopped being finite diverged: the run did, whichever rank saw it first.
    p.status = p.reason.find(DivergedError::kPrefix) != std::string::npos ? run_status::kDiverged : run_status::kFailed;
  }
  awaitRanks(p);
  return summarize(p);
}

// The run's record in the store (rank 0) and its start event: data, stages, threads, processes.
void Session::openRun() {
  if (store_) {
    const std::string name = config_.run.name.empty() ? config_.task + " " + std::to_string(config_.pipeline.stages) + "-stage"
                                                       : config_.run.name;
    runId_ = store_->createRun(name, config_.json.dump(), codeVersion(), config_.run.tags, config_.run.notes);
    bus_.addSink(std::make_shared<RunStoreSink>(store_, runId_, [this](const std::string& why) { storeFailed(why); }));
  }
  bus_.publish(StatusRecord{runId_, run_status::kRunning, "", json::object()});
  bus_.publish(EventRecord{0, elapsed(), eventName(EventKind::Start),
                           json{{"data", built_.data.description},
                                {"train_samples", built_.data.trainSize()},
                                {"eval_samples", built_.data.evalSize()},
                                {"stages", built_.stagesDescription()},
                                {"threads_per_stage", built_.threadsPerStage},
                                {"total_steps", built_.totalSteps},
                                {"aqsgd", built_.aqsgdNote},
                                {"parallel",
                                 {{"processes", ranks_.world()},
                                  {"replicas", config_.parallel.replicas},
                                  {"launched", ranks_.launched()}}}}});
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

void Session::applySetting(const Command& c, int64_t step, double wall) {
  const json old = configValue(config_.json, c.key);
  setValue(c.key, c.value, "setting", true);
  built_.pipeline->setLinkModel(config_.link);
  for (int b = 0; b + 1 < config_.pipeline.stages; ++b)
    for (Direction d : {Direction::Forward, Direction::Backward}) retargetLink(b, d, step, wall);
  if (GradientExchange* g = built_.pipeline->gradientExchange()) {  // resets are reported with its traffic
    if (g->options() != config_.compression.gradients) g->setOptions(config_.compression.gradients);
  }
  bus_.publish(
      EventRecord{step, wall, eventName(EventKind::Setting), json{{"key", c.key}, {"from", old}, {"to", c.value}}});
  const std::string option = c.key.substr(c.key.rfind('.') + 1);
  if (c.key.rfind("compression.", 0) == 0 && AdaptiveControl::reconfiguredBy(option)) adaptive_->setup(step, wall);
}

// One optimizer step on the next batch of `order`; false when the loss is no longer finite (the run diverged).
bool Session::trainStep(RunProgress& p, const std::vector<int64_t>& order, int64_t batch) {
  const int64_t at = (p.step % built_.stepsPerEpoch) * batch;
  auto index = torch::from_blob(const_cast<int64_t*>(order.data()) + at, {batch}, torch::kInt64);
  auto x = built_.data.train_x.index_select(0, index), y = built_.data.train_y.index_select(0, index);
  const int64_t step = p.step + 1;
  const double lr = learningRate(step);
  built_.pipeline->setLearningRate(lr);
  const int64_t every = config_.telemetry.histogram_every;
  const bool histogram = every > 0 && (step % every == 0 || step == 1);
  const auto t0 = Clock::now();
  StepResult r;
  try {
    r = built_.pipeline->step(x, y, step, histogram ? int(config_.telemetry.histogram_bins) : 0, index, p.epoch);
  } catch (const DivergedError& e) {  // a sender met non-finite values before its loss could show them
    const std::string reason = std::string(e.what()) + " at step " + std::to_string(step) +
                               "; lower train.lr or change the compression";
    if (ranks_.active())
      throw DivergedError(reason.substr(std::strlen(DivergedError::kPrefix)));  // the ranks' failure path
    p.status = run_status::kDiverged;
    p.reason = reason;
    return false;
  }

  StepRecord rec;
  rec.step = step;
  rec.epoch = p.epoch;
  rec.samples = batch;
  rec.loss = r.loss;
  if (built_.pipeline->kind() == TaskKind::Classifier) rec.accuracy = double(r.correct) / double(r.predictions);
  rec.lr = lr;
  rec.step_s = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.wall_s = elapsed();
  rec.compute_s = r.compute_s;
  rec.emulated_step_s = r.emulated_s;
  if (ranks_.active()) rec.control_s = commandSeconds_ + r.control_s;
  rec.links = std::move(r.traffic);
  // Wall-clock times are kept on the steps telemetry.timeline_every samples; every step keeps the emulated trace
  // that re-timing needs.
  const int64_t timelineEvery = config_.telemetry.timeline_every;
  if (timelineEvery <= 0 || (step % timelineEvery != 0 && step != 1)) forgetWallTimes(r.trace);
  rec.trace = std::make_shared<const StepTrace>(std::move(r.trace));
  publishStep(std::move(rec), std::move(r.histograms), p);
  if (std::isfinite(r.loss)) return true;
  p.status = run_status::kDiverged;
  p.reason = "the training loss became " + std::to_string(r.loss) + " at step " + std::to_string(step) +
             "; lower train.lr or change the compression";
  return false;
}

// Sums the step into the run's totals, lets adaptive compression decide what the next step sends, and publishes
// the step, its state resets and its histograms.
void Session::publishStep(StepRecord rec, std::vector<HistogramRecord> histograms, RunProgress& p) {
  for (const auto& l : rec.links)
    for (const auto& why : l.resets)
      bus_.publish(EventRecord{rec.step, elapsed(), eventName(EventKind::Reset),
                               json{{"boundary", l.boundary}, {"direction", directionName(l.direction)},
                                    {"reason", why}}});
  p.add(rec);
  adaptive_->observe(rec);  // adaptive compression decides what the next step sends
  bus_.publish(std::move(rec));
  for (auto& h : histograms) bus_.publish(std::move(h));
}

void Session::saveCheckpointIfAsked(const RunProgress& p) {
  if (ranks_.active()) {
    bus_.publish(EventRecord{p.step, elapsed(), eventName(EventKind::Checkpoint),
                             json{{"skipped", "a multi-process run keeps each stage's parameters in its own process; "
                                              "train with parallel.mode=threads to save a checkpoint"}}});
    return;
  }
  const std::string file = checkpointPath(config_.run, store_ ? store_->path() : "", runId_);
  saveCheckpoint(file, built_.pipeline->namedParameters(), built_.data.vocab, config_.json.dump());
  bus_.publish(EventRecord{p.step, elapsed(), eventName(EventKind::Checkpoint), json{{"path", file}}});  // the store sink records it
}

// The other ranks end with this step; a failed run does not wait for stragglers. A rank that does not end well
// fails the run.
void Session::awaitRanks(RunProgress& p) {
  // A run that failed or diverged has ended for every rank: the others may be waiting on this one, so they get a
  // moment to end on their own and are then stopped, and how they ended does not change why the run did.
  const bool over = p.status == run_status::kFailed || p.status == run_status::kDiverged;
  const double wait = p.status == run_status::kFailed     ? 2.0
                      : p.status == run_status::kDiverged ? std::min(10.0, config_.parallel.timeout_s)
                                                          : config_.parallel.timeout_s;
  for (const auto& problem : ranks_.awaitLaunched(wait))
    if (!over) {
      p.status = run_status::kFailed;
      p.reason = problem;
    }
}

// The summary the CLI prints and the store keeps, published as the run's last status.
json Session::summarize(RunProgress& p) {
  // A store that failed late (the final evaluation's or the last step's write) fails the run too.
  const auto failIfTheStoreDid = [&] {
    const std::string why = storeFailure();
    if (why.empty() || p.status == run_status::kFailed) return false;
    p.status = run_status::kFailed;
    p.reason = "the run store failed: " + why;
    return true;
  };
  bus_.drain();
  failIfTheStoreDid();
  const auto summaryOf = [&] {
    return p.summary(runId_, built_.pipeline->kind() == TaskKind::Classifier, config_.compression.inference, elapsed())
        .toJson();
  };
  json summary = summaryOf();
  json ended{{"reason", p.reason}};
  if (json graphs = built_.graphsReport(); !graphs.is_null()) ended["cuda_graphs"] = std::move(graphs);
  bus_.publish(EventRecord{p.step, elapsed(), p.status, ended});
  bus_.publish(StatusRecord{runId_, p.status, p.reason, summary});
  bus_.drain();
  if (failIfTheStoreDid()) summary = summaryOf();  // its last write failed: the sink marked the run failed if it could
  return summary;
}

void Session::storeFailed(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(storeMutex_);
    if (!storeFailure_.empty()) return;
    storeFailure_ = why;
  }
  commands_.requestStop();  // every rank stops with this one at the next step's command round
}

std::string Session::storeFailure() const {
  std::lock_guard<std::mutex> lock(storeMutex_);
  return storeFailure_;
}

void Session::retargetLink(int boundary, Direction d, int64_t step, double wall) {
  Link& link = built_.pipeline->link(boundary);
  const CompressionOptions& want = config_.compression.of(boundary, d);
  const auto reset = [&](const std::string& reason) {
    bus_.publish(EventRecord{step, wall, eventName(EventKind::Reset),
                             json{{"boundary", boundary}, {"direction", directionName(d)}, {"reason", reason}}});
  };
  const int64_t width = built_.pipeline->bottleneckWidth(boundary);
  if (d == Direction::Forward && width > 0 &&
      built_.pipeline->resizeBottleneck(boundary, want.value("code_width").get<int64_t>()))
    reset("bottleneck re-initialised: code width " + std::to_string(width) + " to " +
          std::to_string(built_.pipeline->bottleneckWidth(boundary)) +
          ", both layers from a fresh random orthogonal start");
  if (link.options(d) == want || !link.setOptions(d, want)) return;
  reset(compressorChangedReset(link.describe(d)));
}

void Session::setValue(const std::string& key, const json& value, const std::string& source, bool queued) {
  json next = config_.json;
  setConfigValue(next, key, value);
  Config applied = Config::fromJson(next, source);
  std::lock_guard<std::mutex> lock(configMutex_);  // post() reads config_ and the queue from other threads
  config_ = std::move(applied);
  if (queued && !queuedSets_.empty()) queuedSets_.pop_front();  // on other ranks the sets come from rank 0's
}

double Session::learningRate(int64_t step) const {
  const auto& t = config_.train;
  double lr = t.lr;
  if (t.warmup_steps > 0 && step <= t.warmup_steps) lr *= double(step) / double(t.warmup_steps);
  if (t.lr_schedule == "cosine" && built_.totalSteps > 0)
    lr *= 0.5 * (1.0 + std::cos(M_PI * double(std::min(step, built_.totalSteps)) / double(built_.totalSteps)));
  return lr;
}

double Session::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }


}  // namespace ps
