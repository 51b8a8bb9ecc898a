#pragma once
// A model cut into stages, one worker thread per stage, joined by links. Knows nothing about data sets,
// epochs or telemetry sinks: it runs one step (or one evaluation batch) at a time.
//
// Multi-process (PipelineOptions::cluster set): this process runs one stage of one replica; its links' far ends
// are other processes, every replica trains on its shard of each batch, and a stage's replicas exchange weight
// gradients before the update. Every rank calls step() and evaluate() with the same batch and gets the same,
// whole result back (losses, every link's traffic): the ranks exchange small step reports after each step.
#include "engine/dist/Cluster.h"
#include "engine/pipeline/GradientExchange.h"
#include "engine/pipeline/StageWorker.h"

#include <functional>
#include <memory>
#include <vector>

namespace ps {

// One link's figures from several replicas or ranks as one: bytes, counts and times summed, relative errors over
// all their messages together (from the squared-norm sums each part carries).
LinkTraffic mergeTraffic(const std::vector<LinkTraffic>& parts);
// A step report's link figures after the trip between ranks (encoded and decoded as they travel), for tests.
LinkTraffic trafficThroughJson(const LinkTraffic& t);

struct PipelineOptions {
  std::vector<size_t> starts{0};   // first block of every stage
  int microbatches = 1;
  std::string schedule = "1f1b";
  LinkModel link;
  std::vector<CompressionOptions> forward, backward;  // per boundary
  uint64_t seed = 0;                                  // run seed: codecs' randomness derives from it
  AqsgdOptions aqsgd;
  OptimizerOptions optimizer;
  std::vector<torch::Device> devices;  // per stage; empty: all on the CPU
  int threads_per_stage = 1;
  std::shared_ptr<Cluster> cluster;  // multi-process: set, and this process runs cluster->stage()
  CompressionOptions gradients;      // the replicas' weight-gradient exchange (replicas > 1)
  bool nccl = false;                 // dense all-reduce of CUDA gradients through NCCL instead of the streams
  bool nccl_links = false;           // payloads between CUDA stages of different processes through NCCL
  // Per boundary: the learned bottleneck whose layers end the stage before it and begin the stage after it (null where
  // there is none); engine/models/CodeBottleneck.h.
  std::vector<std::shared_ptr<Bottleneck>> bottlenecks;
  // Payloads between stages of different processes (not on NCCL) through Gloo's point-to-point messages instead of
  // a TCP stream per link direction (parallel.transport).
  bool gloo_links = false;
  // Per-message figures (compression errors, norms, the last stage's loss and hits) read once per step instead of as
  // each is made (pipeline.device_reads): on a GPU each read waits for the device.
  bool deferred_reads = false;
  // CUDA streams (engine/pipeline/StageStream.h): each GPU stage on a stream of its own (pipeline.stage_streams), and
  // the discipline's check mode (pipeline.stream_check), which also checks stages on the CPU.
  bool stage_streams = true, stream_check = false;
  // Whether GPU stages replay their passes from CUDA graphs (pipeline.cuda_graphs, engine/pipeline/StageGraphs.h).
  GraphMode cuda_graphs = GraphMode::Off;
};

struct StepResult {
  double loss = 0;
  int64_t correct = 0, predictions = 0;
  double compute_s = 0;       // summed over stages
  double control_s = 0;       // multi-process: this rank's wall time flushing its sends and gathering step reports
  double emulated_s = 0;      // critical path of the step with modelled links
  StepTrace trace;            // what emulated_s was made of: every stage's (and replica's) events
  std::vector<LinkTraffic> traffic;           // every boundary, forward then backward
  std::vector<HistogramRecord> histograms;    // gradients per stage and link values, when asked for
};

struct EvalResult {
  double loss_sum = 0;  // sum over samples of the mean loss per sample (tokens averaged for LMs)
  int64_t correct = 0, predictions = 0, samples = 0;
  EvalResult& operator+=(const EvalResult& o) {
    loss_sum += o.loss_sum;
    correct += o.correct;
    predictions += o.predictions;
    samples += o.samples;
    return *this;
  }
};

class Pipeline {
 public:
  Pipeline(BlockModel model, PipelineOptions options);
  ~Pipeline();

  int stages() const { return int(options_.starts.size()); }
  int replicas() const { return options_.cluster ? options_.cluster->replicas() : 1; }
  const std::vector<size_t>& starts() const { return options_.starts; }
  TaskKind kind() const { return model_.kind; }
  const BlockModel& model() const { return model_; }

  // One optimizer step on a batch, split into micro-batches along dimension 0.
  // `samples` (optional, int64 [batch]) are the data loader's sample ids, which AQ-SGD keys its buffers by.
  StepResult step(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                  const torch::Tensor& samples = {}, int64_t epoch = 0);
  // Forward only, without gradients, over all of x in batches of `batchSize` rows; `compressed` sends activations
  // through the forward codecs. Across processes the batches stream: a stage sends a batch on and takes the next
  // while the stage after it works, and what crosses is the codec's payload, as in training. `onBatch` (optional)
  // hears (batches done, batches in all) after each batch this process finished.
  using BatchProgress = std::function<void(int64_t done, int64_t total)>;
  EvalResult evaluate(const torch::Tensor& x, const torch::Tensor& y, int64_t batchSize, bool compressed,
                      const BatchProgress& onBatch = {});

  void setLearningRate(double lr);
  // Between steps: gives the learned bottleneck at `boundary` a code of `width`, both its layers the fresh random start
  // the run seed draws for that width and its optimizers' state of them dropped; links count raw bytes for the new
  // width. False when the boundary has no bottleneck or it already has that width.
  bool resizeBottleneck(int boundary, int64_t width);
  // The features the bottleneck at `boundary` codes, 0 where there is none (fixed for the run).
  int64_t bottleneckFeatures(int boundary) const {
    const auto b = bottleneck(boundary);
    return b ? b->features : 0;
  }
  // The code width of the bottleneck at `boundary`, 0 where there is none.
  int64_t bottleneckWidth(int boundary) const {
    const auto b = bottleneck(boundary);
    return b ? b->width : 0;
  }
  // Between steps: the network every link and the gradient exchange model from now on.
  void setLinkModel(const LinkModel& model);
  Link& link(int boundary) { return *links_.at(size_t(boundary)); }
  // The data-parallel gradient exchange of this process's stage; null with one replica.
  GradientExchange* gradientExchange() { return exchange_.get(); }
  std::vector<std::pair<std::string, torch::Tensor>> namedParameters() const;
  // Between steps: how stage `stage` replays its passes from CUDA graphs; null for a stage another process runs.
  const StageGraphs* graphs(int stage) const { return local(stage) ? &workers_[size_t(stage)]->graphs() : nullptr; }

 private:
  BlockModel model_;
  PipelineOptions options_;
  std::unique_ptr<Schedule> schedule_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<StageWorker>> workers_;  // null for stages other processes run
  std::unique_ptr<GradientExchange> exchange_;
  std::vector<std::shared_ptr<RemoteEnd>> remoteEnds_;  // ends of links to other processes, flushed every step
  // One sample's activation shape at every boundary, found by a one-sample forward pass (the model is the same on
  // every rank), for the input sample shape it was found for.
  std::vector<std::vector<int64_t>> boundarySamples_;
  std::vector<int64_t> boundaryInput_;
  const std::vector<std::vector<int64_t>>& boundarySamples(const torch::Tensor& x);

  // Tells each sending stage of a learned bottleneck the decoder to measure its reconstruction with (at build and
  // when a width changes).
  void armReconstruction();
  bool local(int stage) const { return workers_[size_t(stage)] != nullptr; }
  std::shared_ptr<Bottleneck> bottleneck(int boundary) const {
    return boundary >= 0 && size_t(boundary) < options_.bottlenecks.size() ? options_.bottlenecks[size_t(boundary)]
                                                                           : nullptr;
  }
  std::shared_ptr<StepWork> makeWork(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                                     const torch::Tensor& samples, int64_t epoch);
  StepResult distributedStep(const torch::Tensor& x, const torch::Tensor& y, int64_t step, int histogramBins,
                             const torch::Tensor& samples, int64_t epoch);
  static torch::Tensor shardOf(const torch::Tensor& t, int replicas, int replica);  // a replica's rows
  EvalResult evaluateBatch(const torch::Tensor& x, const torch::Tensor& y, bool compressed);
  EvalResult scored(const torch::Tensor& output, const torch::Tensor& target) const;  // one batch's figures
  EvalResult distributedEvaluate(const torch::Tensor& x, const torch::Tensor& y, int64_t batchSize, bool compressed,
                                 const BatchProgress& onBatch);
};

}  // namespace ps
