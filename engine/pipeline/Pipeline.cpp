#include "engine/pipeline/Pipeline.h"

#include "engine/errors/ConfigError.h"
#include "engine/errors/DivergedError.h"

#include "engine/compress/Codec.h"
#include "engine/core/Metrics.h"
#include "engine/pipeline/RemoteEnds.h"
#include "engine/telemetry/StepReport.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace ps {
namespace {

using nlohmann::json;

// The decoder weights of the bottleneck `code` in the report of the stage that holds it (while they are small enough
// to travel: sharesDecoder()): checked by every rank, so a malformed report fails every rank at once; loaded by the
// sending stage's (`adopt`) into its copy, with which it measures the reconstruction.
void readDecoder(const Bottleneck& code, const json& report, bool adopt) {
  if (!report.contains("decoder") || !report.at("decoder").is_binary())
    throw report::ReportError("it holds the decoder of boundary " + std::to_string(code.boundary) +
                              " but sent no weights for it");
  const auto& bytes = report.at("decoder").get_binary();
  try {
    checkDecoderWeights(code, bytes.size());
  } catch (const std::invalid_argument& e) {
    throw report::ReportError(e.what());
  }
  if (adopt) loadDecoderWeights(code, bytes);
}

// One rank's part of a step, merged on every rank: sums over both ends of a link and over replicas.
struct TrafficMerge {
  LinkTraffic total;

  void add(const LinkTraffic& t) {
    total.boundary = t.boundary;
    total.direction = t.direction;
    total.raw_bytes += t.raw_bytes;
    total.wire_bytes += t.wire_bytes;
    total.elements += t.elements;
    total.nonzeros += t.nonzeros;
    total.messages += t.messages;
    total.encode_s += t.encode_s;
    total.decode_s += t.decode_s;
    total.modelled_s += t.modelled_s;
    if (t.elements > 0) {  // the sending end
      total.setErrorSums(total.err_sq + t.err_sq, total.ref_sq + t.ref_sq,
                         total.err_sq_compensated + t.err_sq_compensated,
                         total.ref_sq_compensated + t.ref_sq_compensated);
      if (total.method.empty()) total.method = t.method;
    }
    for (const auto& [name, value] : t.measures) total.measures[name] += value;
    for (const auto& r : t.resets) total.resets.push_back(r);
  }
};

// A rank's step trace holds a few events per micro-batch; anything near this is not one.
constexpr size_t kMostTraceEvents = 1u << 16;

}  // namespace

// A replica's part of a batch: contiguous shards, as even as tensor_split makes them.
torch::Tensor Pipeline::shardOf(const torch::Tensor& t, int replicas, int replica) {
  return replicas > 1 ? t.tensor_split(replicas)[size_t(replica)] : t;
}

LinkTraffic mergeTraffic(const std::vector<LinkTraffic>& parts) {
  TrafficMerge m;
  for (const auto& t : parts) m.add(t);
  return m.total;
}

LinkTraffic trafficThroughJson(const LinkTraffic& t) { return report::trafficFromJson(report::toJson(t), 1 << 20); }

Pipeline::Pipeline(BlockModel model, PipelineOptions options)
    : model_(std::move(model)), options_(std::move(options)), schedule_(makeSchedule(options_.schedule)) {
  const int stages = int(options_.starts.size());
  for (int b = 0; b + 1 < stages; ++b) {
    Link::Settings settings;
    if (b < int(options_.forward.size())) settings.forward = options_.forward[size_t(b)];
    if (b < int(options_.backward.size())) settings.backward = options_.backward[size_t(b)];
    settings.context.seed = options_.seed;
    settings.aqsgd = options_.aqsgd;
    settings.deferReads = options_.deferred_reads;
    settings.streamCheck = options_.stream_check;
    links_.push_back(std::make_unique<Link>(b, options_.link, settings));
    if (auto code = bottleneck(b)) links_.back()->setRawScale(double(code->features) / double(code->width));
  }
  // Stage s sends forward on link s and backward on link s - 1: one interface for both where the model shares it.
  for (int s = 0; s < stages; ++s) {
    auto egress = std::make_shared<Link::Egress>();
    if (s + 1 < stages) links_[size_t(s)]->shareEgress(Direction::Forward, egress);
    if (s > 0) links_[size_t(s - 1)]->shareEgress(Direction::Backward, egress);
  }
  const auto& cluster = options_.cluster;
  for (int s = 0; s < stages; ++s) {
    if (cluster && s != cluster->stage()) {
      workers_.push_back(nullptr);
      continue;
    }
    const size_t first = options_.starts[size_t(s)];
    const size_t last = s + 1 < stages ? options_.starts[size_t(s) + 1] : model_.size();
    auto device = s < int(options_.devices.size()) ? options_.devices[size_t(s)] : torch::Device(torch::kCPU);
    auto module = std::make_shared<StageModule>(model_, first, last);
    module->attach(bottleneck(s - 1), bottleneck(s));
    workers_.push_back(std::make_unique<StageWorker>(
        s, stages, std::move(module), device, options_.optimizer, options_.threads_per_stage,
        StreamOptions{options_.stage_streams, options_.stream_check, options_.cuda_graphs}));
    workers_.back()->deferReads(options_.deferred_reads);
  }
  armReconstruction();
  for (int s = 0; s < stages; ++s)
    if (local(s))
      workers_[size_t(s)]->connect(s > 0 ? links_[size_t(s) - 1].get() : nullptr,
                                   s + 1 < stages ? links_[size_t(s)].get() : nullptr);
  if (!cluster) return;
  const int me = cluster->stage();
  remoteEnds_ =
      connectRemoteEnds(cluster, links_, options_.nccl_links, options_.gloo_links, workers_[size_t(me)]->device().index());
  if (cluster->replicas() > 1) {
    exchange_ = std::make_unique<GradientExchange>(cluster, me, options_.gradients, options_.seed, options_.link,
                                                   options_.nccl);
    StageWorker* w = workers_[size_t(me)].get();
    w->setBeforeUpdate(
        [this, w](StageStepResult& r) { exchange_->reduce(w->module().parameters(), r.clock, &r.trace.events); });
  }
}

Pipeline::~Pipeline() {
  for (auto& l : links_) l->abort();
  workers_.clear();  // joins the threads before the links go
}

StepResult Pipeline::step(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                          const torch::Tensor& samples, int64_t epoch) {
  if (options_.cluster) return distributedStep(x, y, step, histogramBins, samples, epoch);
  auto work = makeWork(x, y, step, histogramBins, samples, epoch);
  const int m = int(work->inputs.size());

  for (auto& l : links_) l->armHistograms(histogramBins, step);
  std::vector<std::future<StageStepResult>> futures;
  for (int s = 0; s < stages(); ++s)
    futures.push_back(workers_[size_t(s)]->trainStep(schedule_->ops(s, stages(), m), work));

  // Collect every stage; if one fails, abort the links so the others stop waiting, then report the first error, or
  // the first divergence when there is one: with checks read once a step, a stage that sent a NaN on reports its
  // divergence only after the stage that received it found a value that is not finite.
  std::vector<StageStepResult> results(futures.size());
  std::exception_ptr failure;
  bool diverged = false;
  for (size_t s = 0; s < futures.size(); ++s) {
    try {
      results[s] = futures[s].get();
    } catch (const PipelineAborted&) {
    } catch (const DivergedError&) {
      if (!diverged) failure = std::current_exception(), diverged = true;
      for (auto& l : links_) l->abort();
    } catch (...) {
      if (!failure) failure = std::current_exception();
      for (auto& l : links_) l->abort();
    }
  }
  if (failure) {
    for (auto& l : links_) {  // drop what the abandoned step left behind
      l->reset();
      l->takeHistograms();
      for (Direction d : {Direction::Forward, Direction::Backward}) l->takeTraffic(d);
    }
    std::rethrow_exception(failure);
  }

  StepResult r;
  r.loss = results.back().loss;
  r.correct = results.back().correct;
  r.predictions = results.back().predictions;
  r.trace.model = options_.link;
  std::vector<int64_t> began;
  for (auto& s : results) {
    r.compute_s += s.compute_s;
    r.emulated_s = std::max(r.emulated_s, s.clock);
    if (s.gradients) r.histograms.push_back(std::move(*s.gradients));
    r.trace.lanes.push_back(std::move(s.trace));
    began.push_back(steadyNanoseconds(s.began));
  }
  alignWallTimes(r.trace.lanes, began);  // the stages' threads began the step at their own moments
  for (auto& l : links_) {
    for (Direction d : {Direction::Forward, Direction::Backward}) r.traffic.push_back(l->takeTraffic(d));
    for (auto& h : l->takeHistograms()) r.histograms.push_back(std::move(h));
  }
  return r;
}

void Pipeline::setLinkModel(const LinkModel& model) {
  options_.link = model;
  for (auto& l : links_) l->setModel(model);
  if (exchange_) exchange_->setModel(model);
}

void Pipeline::setLearningRate(double lr) {
  for (auto& w : workers_)
    if (w) w->setLearningRate(lr);
}

bool Pipeline::resizeBottleneck(int boundary, int64_t width) {
  const auto b = bottleneck(boundary);
  if (!b || b->width == width) return false;
  if (width < 1 || width >= b->features)
    throw ConfigError("compression.forward.code_width = " + std::to_string(width) + " at boundary " +
                      std::to_string(boundary) + " is not narrower than its " + std::to_string(b->features) +
                      " features; use 1.." + std::to_string(b->features - 1));
  const torch::Tensor q = orthonormalColumns(b->features, width, options_.seed, boundary);
  torch::NoGradGuard noGrad;
  const std::pair<CodeProjection, torch::Tensor> halves[] = {{b->encoder, q.t().contiguous()}, {b->decoder, q}};
  for (int side = 0; side < 2; ++side) {
    const auto& [half, start] = halves[side];
    const int stage = boundary + side;  // the encoder ends the stage before the boundary, the decoder begins the next
    if (local(stage)) workers_[size_t(stage)]->forgetOptimizerState(half->weight());
    half->weight().mutable_grad() = torch::Tensor();  // zeroed, not dropped, by the optimizer: it has the old shape
    half->weight().set_data(start.to(half->weight().device()));
  }
  b->width = width;
  links_[size_t(boundary)]->setRawScale(double(b->features) / double(width));
  armReconstruction();     // a new width may cross the size a report carries
  boundaryInput_.clear();  // the code's shape at the boundary changed: found again at the next step
  return true;
}

void Pipeline::armReconstruction() {
  // A bottleneck's error is measured by its sending stage with the decoder: the next stage's own in one process; across
  // processes this process's copy of it, on the sending stage's device, which every step's reports bring up to date
  // (distributedStep()) where they can carry it.
  for (int s = 0; s + 1 < stages(); ++s) {
    const auto code = bottleneck(s);
    if (!code || !local(s)) continue;
    if (local(s + 1)) {
      workers_[size_t(s)]->measureReconstructionWith(code->decoder);
    } else {
      code->decoder->to(workers_[size_t(s)]->device());
      workers_[size_t(s)]->measureReconstructionWith(sharesDecoder(*code) ? code->decoder : CodeProjection(nullptr));
    }
  }
}

std::vector<std::pair<std::string, torch::Tensor>> Pipeline::namedParameters() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& w : workers_)
    if (w)
      for (const auto& item : w->module().named_parameters()) out.emplace_back(item.key(), item.value());
  return out;
}

StepResult Pipeline::distributedStep(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                                     const torch::Tensor& samples, int64_t epoch) {
  Cluster& cluster = *options_.cluster;
  const int replicas = cluster.replicas(), me = cluster.stage();
  auto work = makeWork(shardOf(x, replicas, cluster.replica()), shardOf(y, replicas, cluster.replica()), step,
                       histogramBins, samples.defined() ? shardOf(samples, replicas, cluster.replica()) : samples,
                       epoch);
  const int m = int(work->inputs.size());
  for (auto& l : links_) l->armHistograms(histogramBins, step);
  StageStepResult mine;
  std::chrono::steady_clock::time_point stageDone;
  try {
    mine = workers_[size_t(me)]->trainStep(schedule_->ops(me, stages(), m), work).get();
    stageDone = std::chrono::steady_clock::now();
    cluster.flushSends();
    for (auto& end : remoteEnds_) end->flush();
  } catch (...) {
    for (auto& l : links_) l->reset();
    throw;
  }

  json report = {{"stage", me}, {"replica", cluster.replica()}, {"loss", mine.loss}, {"correct", mine.correct},
                 {"predictions", mine.predictions}, {"compute", mine.compute_s}, {"clock", mine.clock}};
  json traffic = json::array(), histograms = json::array();
  for (int b : {me - 1, me}) {
    if (b < 0 || b + 1 >= stages()) continue;
    for (Direction d : {Direction::Forward, Direction::Backward}) traffic.push_back(report::toJson(links_[size_t(b)]->takeTraffic(d)));
    for (auto& h : links_[size_t(b)]->takeHistograms())
      if (cluster.replica() == 0) histograms.push_back(report::toJson(h));
  }
  if (exchange_) traffic.push_back(report::toJson(exchange_->takeTraffic()));
  if (mine.gradients && cluster.replica() == 0) histograms.push_back(report::toJson(*mine.gradients));
  report["traffic"] = std::move(traffic);
  report["histograms"] = std::move(histograms);
  mine.trace.replica = cluster.replica();
  report["trace"] = json::binary(encodeLane(mine.trace));
  report["began"] = steadyNanoseconds(mine.began) + cluster.clockOffsetNs();  // on rank 0's clock
  // The decoder this stage begins with, as its update left it: the previous stage measures its bottleneck's
  // reconstruction with it next step (replicas hold the same one; the first speaks).
  if (auto code = bottleneck(me - 1); code && cluster.replica() == 0 && sharesDecoder(*code))
    report["decoder"] = json::binary(decoderWeights(*code));

  // Every rank learns every rank's part, so every rank returns the same result and decides the same next step.
  const auto reports = cluster.allGatherWorld(json::to_cbor(report));
  StepResult r;
  r.control_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stageDone).count();
  r.trace.model = options_.link;
  std::vector<int64_t> began;
  std::map<std::pair<int, int>, TrafficMerge> merged;
  const double batch = double(x.size(0));
  for (size_t rank = 0; rank < reports.size(); ++rank) {
    try {
      const json j = report::readCbor(reports[rank]);
      const int stage = int(report::count(j, "stage")), replica = int(report::count(j, "replica"));
      if (stage != int(rank) % stages() || replica != int(rank) / stages())  // each rank speaks for itself only
        throw std::runtime_error("it claims stage " + std::to_string(stage) + ", replica " + std::to_string(replica));
      if (stage == stages() - 1) {  // the loss is the mean over the batch: each replica's shard mean, weighted
        // A loss that is not finite is the run diverging, not a malformed report: the session ends it as such.
        if (!j.at("loss").is_number()) throw report::ReportError("loss is not a number");
        r.loss += j.at("loss").get<double>() * double(shardOf(x, replicas, replica).size(0)) / batch;
        r.correct += int64_t(report::count(j, "correct"));
        r.predictions += int64_t(report::count(j, "predictions"));
      }
      r.compute_s += report::finite(j, "compute") / replicas;  // summed over stages, as one replica sees it
      r.emulated_s = std::max(r.emulated_s, report::finite(j, "clock"));
      if (!j.at("traffic").is_array() || !j.at("histograms").is_array())
        throw report::ReportError("traffic and histograms must be lists");
      for (const auto& t : j.at("traffic")) {
        LinkTraffic lt = report::trafficFromJson(t, stages());
        merged[{lt.direction == Direction::Gradients ? 1 << 20 : 0, lt.boundary * 2 + int(lt.direction)}].add(lt);
      }
      for (const auto& h : j.at("histograms")) r.histograms.push_back(report::histogramFromJson(h));
      if (!j.at("trace").is_binary()) throw report::ReportError("its step trace must be bytes");
      const auto& bytes = j.at("trace").get_binary();
      TraceLane lane = decodeLane(bytes.data(), bytes.size(), kMostTraceEvents);
      if (lane.stage != stage || lane.replica != replica)
        throw report::ReportError("its step trace is for another stage or replica");
      r.trace.lanes.push_back(std::move(lane));
      if (!j.at("began").is_number_integer()) throw report::ReportError("when its step began must be an integer");
      began.push_back(j.at("began").get<int64_t>());
      if (auto code = bottleneck(stage - 1); code && replica == 0 && sharesDecoder(*code))
        readDecoder(*code, j, stage == me + 1);  // this rank's stage sends through it: its copy is brought up to date
    } catch (const ClusterError&) {
      throw;
    } catch (const std::exception& e) {
      throw ClusterError(cluster.describe(int(rank)) + " sent a malformed step report (" + e.what() + ")");
    }
  }
  for (auto& [key, m] : merged) r.traffic.push_back(m.total);
  try {
    alignWallTimes(r.trace.lanes, began);  // every rank's start, read on rank 0's clock
  } catch (const TraceError& e) {
    throw ClusterError(std::string("the ranks' step reports disagree on when the step began (") + e.what() + ")");
  }
  return r;
}

}  // namespace ps
