// Session::run as a short loop over named steps: apply commands, train a step, publish it, evaluate when due, then
// finish, wait for the other ranks and summarise.
#include "engine/session/Session.h"

#include "engine/errors/DivergedError.h"

#include "engine/core/CodeVersion.h"
#include "engine/core/RunSummary.h"
#include "engine/session/Checkpoint.h"
#include "engine/session/RunStoreSink.h"

#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <cstring>
#include <numeric>
#include <random>

namespace ps {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json Session::run() {
  start_ = Clock::now();
  prepare();  // configuration and data errors propagate: nothing has been recorded yet
  openRun();
  Progress p;
  std::mt19937_64 shuffleRng(config_.train.seed ^ 0x5eed5eedULL);
  const int64_t n = data_.trainSize();
  const int64_t batch = std::min<int64_t>(n, config_.train.batch_size);
  std::vector<int64_t> order(static_cast<size_t>(n));
  try {
    setupAdapters(0, elapsed());  // inside the try: a controller that refuses its options fails the run, recorded
    while (p.step < totalSteps_) {
      if (p.step % stepsPerEpoch_ == 0) {  // a new epoch: a new order of the samples
        p.epoch = p.step / stepsPerEpoch_;
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), shuffleRng);
      }
      ranks_.injectFault(p.step + 1);
      if (!handleCommands(p.step)) {
        p.status = "stopped";
        p.reason = "stopped by the user at step " + std::to_string(p.step);
        break;
      }
      if (!trainStep(p, order, batch)) break;
      if (config_.eval.every_steps > 0 && p.step % config_.eval.every_steps == 0 && p.step < totalSteps_) evaluate(p);
    }
    finishTraining(p);
  } catch (const std::exception& e) {
    p.reason = ranks_.failureReason(e.what(), config_.parallel.timeout_s);
    // A rank whose values stopped being finite diverged: the run did, whichever rank saw it first.
    p.status = p.reason.find(DivergedError::kPrefix) != std::string::npos ? "diverged" : "failed";
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
    bus_.addSink(std::make_shared<RunStoreSink>(store_, runId_));
  }
  bus_.publish(StatusRecord{runId_, "running", "", json::object()});
  bus_.publish(EventRecord{0, elapsed(), eventName(EventKind::Start),
                           json{{"data", data_.description},
                                {"train_samples", data_.trainSize()},
                                {"eval_samples", data_.evalSize()},
                                {"stages", stagesDescription()},
                                {"threads_per_stage", threadsPerStage_},
                                {"total_steps", totalSteps_},
                                {"aqsgd", aqsgdNote_},
                                {"parallel",
                                 {{"processes", ranks_.world()},
                                  {"replicas", config_.parallel.replicas},
                                  {"launched", ranks_.launched()}}}}});
}

json Session::stagesDescription() const {
  json stages = json::array();
  for (int s = 0; s < pipeline_->stages(); ++s) {
    const size_t first = pipeline_->starts()[size_t(s)];
    const size_t last = s + 1 < pipeline_->stages() ? pipeline_->starts()[size_t(s) + 1] : pipeline_->model().size();
    int64_t params = 0;
    json names = json::array();
    for (size_t b = first; b < last; ++b) {
      params += pipeline_->model().parameterCount(b);
      names.push_back(pipeline_->model().names[b]);
    }
    stages.push_back({{"blocks", names}, {"parameters", params}});
  }
  return stages;
}

// One optimizer step on the next batch of `order`; false when the loss is no longer finite (the run diverged).
bool Session::trainStep(Progress& p, const std::vector<int64_t>& order, int64_t batch) {
  const int64_t at = (p.step % stepsPerEpoch_) * batch;
  auto index = torch::from_blob(const_cast<int64_t*>(order.data()) + at, {batch}, torch::kInt64);
  auto x = data_.train_x.index_select(0, index), y = data_.train_y.index_select(0, index);
  const int64_t step = p.step + 1;
  const double lr = learningRate(step);
  pipeline_->setLearningRate(lr);
  const int64_t every = config_.telemetry.histogram_every;
  const bool histogram = every > 0 && (step % every == 0 || step == 1);
  const auto t0 = Clock::now();
  StepResult r;
  try {
    r = pipeline_->step(x, y, step, histogram ? int(config_.telemetry.histogram_bins) : 0, index, p.epoch);
  } catch (const DivergedError& e) {  // a sender met non-finite values before its loss could show them
    const std::string reason = std::string(e.what()) + " at step " + std::to_string(step) +
                               "; lower train.lr or change the compression";
    if (ranks_.active())
      throw DivergedError(reason.substr(std::strlen(DivergedError::kPrefix)));  // the ranks' failure path
    p.status = "diverged";
    p.reason = reason;
    return false;
  }

  StepRecord rec;
  rec.step = step;
  rec.epoch = p.epoch;
  rec.samples = batch;
  rec.loss = r.loss;
  if (pipeline_->kind() == TaskKind::Classifier) rec.accuracy = double(r.correct) / double(r.predictions);
  rec.lr = lr;
  rec.step_s = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.wall_s = elapsed();
  rec.compute_s = r.compute_s;
  rec.emulated_step_s = r.emulated_s;
  if (ranks_.active()) rec.control_s = commandSeconds_ + r.control_s;
  rec.links = std::move(r.traffic);
  rec.trace = std::make_shared<const StepTrace>(std::move(r.trace));
  publishStep(std::move(rec), std::move(r.histograms), p);
  if (std::isfinite(r.loss)) return true;
  p.status = "diverged";
  p.reason = "the training loss became " + std::to_string(r.loss) + " at step " + std::to_string(step) +
             "; lower train.lr or change the compression";
  return false;
}

// Sums the step into the run's totals, lets adaptive compression decide what the next step sends, and publishes
// the step, its state resets and its histograms.
void Session::publishStep(StepRecord rec, std::vector<HistogramRecord> histograms, Progress& p) {
  for (const auto& l : rec.links) {
    for (const auto& why : l.resets)
      bus_.publish(EventRecord{rec.step, elapsed(), eventName(EventKind::Reset),
                               json{{"boundary", l.boundary}, {"direction", directionName(l.direction)},
                                    {"reason", why}}});
    rec.codec_s += l.encode_s + l.decode_s;
    rec.link_s += l.modelled_s;
    p.raw += l.raw_bytes;
    p.wire += l.wire_bytes;
  }
  p.emulated += rec.emulated_step_s;
  rec.emulated_s = p.emulated;
  p.step = rec.step;
  p.recentLoss.push_back(rec.loss);
  if (p.recentLoss.size() > 50) p.recentLoss.pop_front();
  adapt(rec);  // adaptive compression decides what the next step sends
  bus_.publish(std::move(rec));
  for (auto& h : histograms) bus_.publish(std::move(h));
}

// The final evaluation, the run's status and the checkpoint it asked for.
void Session::finishTraining(Progress& p) {
  if (p.status != "diverged") evaluate(p);
  if (p.status == "running") p.status = "finished";
  if (config_.run.save_checkpoint && p.status != "diverged") saveCheckpointIfAsked(p);
}

void Session::saveCheckpointIfAsked(const Progress& p) {
  if (ranks_.active()) {
    bus_.publish(EventRecord{p.step, elapsed(), eventName(EventKind::Checkpoint),
                             json{{"skipped", "a multi-process run keeps each stage's parameters in its own process; "
                                              "train with parallel.mode=threads to save a checkpoint"}}});
    return;
  }
  namespace fs = std::filesystem;
  fs::path dir = config_.run.checkpoint_dir.empty()
                     ? (store_ ? fs::path(store_->path()).parent_path() / "checkpoints" : fs::path("checkpoints"))
                     : fs::path(config_.run.checkpoint_dir);
  const std::string name =
      config_.run.checkpoint_file.empty() ? "run-" + std::to_string(runId_) + ".pt" : config_.run.checkpoint_file;
  const std::string file = (dir / name).string();  // an absolute checkpoint_file replaces the folder
  saveCheckpoint(file, pipeline_->namedParameters(), data_.vocab, config_.json.dump());
  bus_.publish(EventRecord{p.step, elapsed(), eventName(EventKind::Checkpoint), json{{"path", file}}});  // the store sink records it
}

// The other ranks end with this step; a failed run does not wait for stragglers. A rank that does not end well
// fails the run.
void Session::awaitRanks(Progress& p) {
  for (const auto& problem : ranks_.awaitLaunched(p.status == "failed" ? 2.0 : config_.parallel.timeout_s))
    if (p.status != "failed") {
      p.status = "failed";
      p.reason = problem;
    }
}

// The summary the CLI prints and the store keeps, published as the run's last status.
json Session::summarize(const Progress& p) {
  RunSummary s;
  s.run_id = runId_;
  s.status = p.status;
  s.reason = p.reason;
  s.steps = p.step;
  if (!p.recentLoss.empty())
    s.train_loss = std::accumulate(p.recentLoss.begin(), p.recentLoss.end(), 0.0) / double(p.recentLoss.size());
  s.classifier = pipeline_->kind() == TaskKind::Classifier;
  auto figures = [](const std::optional<EvalRecord>& e) {
    EvalFigures f;
    if (e) f.loss = e->loss, f.accuracy = e->accuracy, f.perplexity = e->perplexity;
    return f;
  };
  s.compressed = figures(p.evalCompressed);
  s.uncompressed = figures(p.evalPlain);
  s.eval = config_.compression.inference ? s.compressed : s.uncompressed;  // both are always reported
  s.bytes_raw = p.raw;
  s.bytes_wire = p.wire;
  s.wall_seconds = elapsed();
  s.emulated_seconds = p.emulated;
  const json summary = s.toJson();
  bus_.publish(EventRecord{p.step, elapsed(), p.status, json{{"reason", p.reason}}});
  bus_.publish(StatusRecord{runId_, p.status, p.reason, summary});
  bus_.drain();
  return summary;
}

}  // namespace ps
