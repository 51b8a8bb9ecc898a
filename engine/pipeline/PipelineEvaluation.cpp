#include "engine/pipeline/Pipeline.h"
#include "engine/pipeline/RemoteEnds.h"
#include "engine/telemetry/StepReport.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

// Pipeline's evaluation: the model's figures on a held-out set, batch by batch, through the links' compressors or
// around them. In one process every stage runs in turn on the caller's thread; across processes the batches stream
// through the links.

namespace ps {

using nlohmann::json;

EvalResult Pipeline::evaluate(const torch::Tensor& x, const torch::Tensor& y, int64_t batchSize, bool compressed,
                              const BatchProgress& onBatch) {
  if (batchSize < 1) throw std::invalid_argument("an evaluation batch needs at least one row");
  if (options_.cluster) return distributedEvaluate(x, y, batchSize, compressed, onBatch);
  EvalResult total;
  const int64_t batches = (x.size(0) + batchSize - 1) / batchSize;
  for (int64_t at = 0; at < x.size(0); at += batchSize) {
    const int64_t end = std::min(x.size(0), at + batchSize);
    total += evaluateBatch(x.slice(0, at, end), y.slice(0, at, end), compressed);
    if (onBatch) onBatch(at / batchSize + 1, batches);
  }
  return total;
}

EvalResult Pipeline::evaluateBatch(const torch::Tensor& x, const torch::Tensor& y, bool compressed) {
  torch::NoGradGuard noGrad;
  torch::Tensor h = x;
  for (int s = 0; s < stages(); ++s) {
    auto& w = *workers_[size_t(s)];
    h = w.module().forward(h.to(w.device()));
    if (compressed && s + 1 < stages()) h = links_[size_t(s)]->roundTrip(Direction::Forward, h);
  }
  return scored(h, y.to(h.device()));
}

EvalResult Pipeline::scored(const torch::Tensor& output, const torch::Tensor& target) const {
  EvalResult r;
  r.samples = output.size(0);
  r.loss_sum = lossOf(model_.kind, output, target).item<double>() * double(r.samples);
  r.correct = correctOf(model_.kind, output, target);
  r.predictions = target.numel();
  return r;
}

EvalResult Pipeline::distributedEvaluate(const torch::Tensor& x, const torch::Tensor& y, int64_t batchSize,
                                         bool compressed, const BatchProgress& onBatch) {
  torch::NoGradGuard noGrad;
  Cluster& cluster = *options_.cluster;
  const int replicas = cluster.replicas(), replica = cluster.replica(), me = cluster.stage();
  auto& w = *workers_[size_t(me)];
  EvalResult mine;
  const int64_t batches = (x.size(0) + batchSize - 1) / batchSize;
  try {
    // The batches stream: a stage sends a batch on through its link's stream and goes on with the next while the
    // batch crosses and the next stage works on the one before, as a training step's micro-batches do.
    for (int64_t at = 0; at < x.size(0); at += batchSize) {
      const int64_t end = std::min(x.size(0), at + batchSize);
      const auto xs = shardOf(x.slice(0, at, end), replicas, replica);
      if (xs.size(0) == 0) continue;  // every rank shards alike, so the stage before sent nothing either
      torch::Tensor h = me == 0 ? xs.to(w.device())
                                : links_[size_t(me - 1)]->receiveEvaluation(
                                      Direction::Forward, w.device(),
                                      activationShape(xs.size(0), boundarySamples(xs)[size_t(me - 1)]), compressed);
      h = w.module().forward(h);
      if (me + 1 < stages()) {
        links_[size_t(me)]->sendEvaluation(Direction::Forward, h, compressed);
      } else {
        mine += scored(h, shardOf(y.slice(0, at, end), replicas, replica).to(h.device()));
      }
      if (onBatch) onBatch(at / batchSize + 1, batches);
    }
    for (auto& end : remoteEnds_) end->flush();
  } catch (...) {
    for (auto& l : links_) l->reset();
    throw;
  }
  const json report = {{"loss", mine.loss_sum}, {"correct", mine.correct}, {"predictions", mine.predictions},
                       {"samples", mine.samples}};
  EvalResult r;
  const auto reports = cluster.allGatherWorld(json::to_cbor(report));
  for (size_t rank = 0; rank < reports.size(); ++rank) {
    try {
      const json j = report::readCbor(reports[rank]);
      if (!j.at("loss").is_number()) throw report::ReportError("loss is not a number");
      r.loss_sum += j.at("loss").get<double>();
      r.correct += int64_t(report::count(j, "correct"));
      r.predictions += int64_t(report::count(j, "predictions"));
      r.samples += int64_t(report::count(j, "samples"));
    } catch (const std::exception& e) {
      throw ClusterError(cluster.describe(int(rank)) + " sent a malformed evaluation report (" + e.what() + ")");
    }
  }
  return r;
}

}  // namespace ps
