#include "engine/runs/config/ConfigChecks.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/core/Metrics.h"

namespace ps {
namespace {

using nlohmann::json;

// The names of the `methods` that `keep` accepts, comma-separated, in catalogue order.
template <typename Keep>
std::string namesWhere(const std::vector<MethodSpec>& methods, Keep keep) {
  std::string s;
  for (const auto& m : methods)
    if (keep(m)) s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

std::string sparseCodecs() {
  return namesWhere(catalogue::codecs(), [](const MethodSpec& m) { return m.sparse; });
}

// Every stage gets at least one of the model's blocks.
void checkStages(const Config& c, const std::string& source) {
  const int blocks = modelBlocks(c.task, c.model.depth);
  if (c.pipeline.stages > blocks)
    throw ConfigError(source + ": pipeline.stages = " + std::to_string(c.pipeline.stages) + " but the " + c.task +
                      " model at model.depth = " + std::to_string(c.model.depth) + " has " + std::to_string(blocks) +
                      " blocks, and every stage needs one; use at most " + std::to_string(blocks) +
                      " stages or raise model.depth");
}

// Explicit cuts: one per stage after the first, strictly increasing, and only with pipeline.balance = explicit.
void checkCuts(const Config& c, const std::string& source) {
  const auto& p = c.pipeline;
  if (p.balance != "explicit") {
    if (!p.cuts.empty())
      throw ConfigError(source + ": pipeline.cuts is set but pipeline.balance is '" + p.balance +
                        "'; set pipeline.balance=explicit to use explicit cut points");
    return;
  }
  if (static_cast<int>(p.cuts.size()) != p.stages - 1)
    throw ConfigError(source + ": pipeline.cuts has " + std::to_string(p.cuts.size()) +
                      " entries but pipeline.stages = " + std::to_string(p.stages) + " needs " +
                      std::to_string(p.stages - 1) + " (the first block of each stage after the first)");
  for (size_t i = 1; i < p.cuts.size(); ++i)
    if (p.cuts[i] <= p.cuts[i - 1])
      throw ConfigError(source + ": pipeline.cuts must be strictly increasing, got " +
                        c.json["pipeline"]["cuts"].dump());
}

// The batch splits into every replica's micro-batches, and the run has an end.
void checkBatching(const Config& c, const std::string& source) {
  const int64_t batch = c.train.batch_size, micro = c.pipeline.microbatches, replicas = c.parallel.replicas;
  if (micro > batch)
    throw ConfigError(source + ": pipeline.microbatches = " + std::to_string(micro) + " exceeds train.batch_size = " +
                      std::to_string(batch) + "; every micro-batch needs at least one sample");
  if (c.train.epochs == 0 && c.train.max_steps == 0)
    throw ConfigError(source + ": train.epochs and train.max_steps are both 0; set one of them to end the run");
  if (replicas > 1 && c.parallel.mode == "threads")
    throw ConfigError(source + ": parallel.replicas = " + std::to_string(replicas) +
                      " needs one process per stage and replica, but parallel.mode = threads; set parallel.mode=auto "
                      "or processes");
  if (replicas > 1 && batch % replicas != 0)
    throw ConfigError(source + ": train.batch_size = " + std::to_string(batch) +
                      " does not split evenly over parallel.replicas = " + std::to_string(replicas) +
                      "; use a batch size that is a multiple of the replicas");
  if (micro * replicas > batch)
    throw ConfigError(source + ": pipeline.microbatches = " + std::to_string(micro) + " x parallel.replicas = " +
                      std::to_string(replicas) + " exceeds train.batch_size = " + std::to_string(batch) +
                      "; every replica's micro-batch needs at least one sample");
}

// The compensations that also work on gradients (every one but those for forward activations only).
std::string backwardCompensations() {
  return namesWhere(catalogue::compensations(), [](const MethodSpec& m) { return !m.forwardOnly; });
}

// One direction's compressor: the controller fits the codec, the bit widths exist, the compensation fits the
// direction.
void checkDirection(const CompressionOptions& o, const std::string& where, bool forward, const std::string& source) {
  if (o.adapt != "none" && !o.sparse())
    throw ConfigError(source + ": " + where + ".adapt = " + o.adapt + " adapts a sparsifier's K, but " + where +
                      ".method is " + o.method + "; use one of " + sparseCodecs());
  if (const std::string why = checkController(o, where); !why.empty()) throw ConfigError(source + ": " + why);
  if (o.bits > 8 && o.bits != 16)
    throw ConfigError(source + ": " + where + ".bits = " + std::to_string(o.bits) +
                      " is not allowed: use 1..8, or 16 for an fp16 cast");
  if (o.value_bits > 8 && o.value_bits != 16 && o.value_bits != 32)
    throw ConfigError(source + ": " + where + ".value_bits = " + std::to_string(o.value_bits) +
                      " is not allowed: use 1..8, 16 (fp16) or 32 (float32)");
  if (codesThroughLayers(o) && !forward)
    throw ConfigError(source + ": " + where + ".method = " + o.method + " is a pair of layers around a pipeline " +
                      "boundary and is set on its forward direction (compression.forward or " +
                      "compression.boundaries.N.forward); what goes back is then the gradient of the code, which " +
                      "none or another codec compresses. Use another codec here");
  const MethodSpec* compensation = catalogue::compensation(o.feedback);
  if (compensation && compensation->forwardOnly && !forward)
    throw ConfigError(source + ": " + where + ".feedback = " + o.feedback + " applies to forward activations only; " +
                      "backward gradients use one of " + backwardCompensations());
}

// Every direction's compressor, the per-boundary ones included, and every boundary named exists.
void checkCompression(const Config& c, const std::string& source) {
  checkDirection(c.compression.forward, "compression.forward", true, source);
  checkDirection(c.compression.backward, "compression.backward", false, source);
  checkDirection(c.compression.gradients, "compression.gradients", false, source);
  for (size_t i = 0; i < c.compression.boundary_forward.size(); ++i) {
    const std::string at = "compression.boundaries." + std::to_string(i);
    checkDirection(c.compression.boundary_forward[i], at + ".forward", true, source);
    checkDirection(c.compression.boundary_backward[i], at + ".backward", false, source);
  }
  const int stages = c.pipeline.stages;
  const json& b = c.json["compression"].value("boundaries", json::object());
  for (auto it = b.begin(); it != b.end(); ++it)
    if (std::stoi(it.key()) >= stages - 1)
      throw ConfigError(source + ": compression.boundaries." + it.key() +
                        " names a boundary that does not exist; with " + std::to_string(stages) +
                        " stages the boundaries are 0.." + std::to_string(stages - 2));
}

}  // namespace

bool codesThroughLayers(const CompressionOptions& o) {
  const MethodSpec* codec = catalogue::codec(o.method);
  return codec && codec->layers;
}

std::string bottleneckChange(const Config::Compression& before, const Config::Compression& after,
                             const std::vector<int64_t>& features) {
  for (size_t b = 0; b < before.boundary_forward.size() && b < after.boundary_forward.size(); ++b) {
    const CompressionOptions &was = before.boundary_forward[b], &is = after.boundary_forward[b];
    const bool had = codesThroughLayers(was), has = codesThroughLayers(is);
    if (!had && !has) continue;
    const std::string at = "boundary " + std::to_string(b);
    if (had != has)
      return std::string("a learned bottleneck's layers are built when a run starts, and this would ") +
             (has ? "add one at " : "remove the one at ") + at;
    if (was.value("code_init") != is.value("code_init"))
      return "the learned bottleneck at " + at + " is built with its code_init when the run starts (its code_width " +
             "may change: the layers then start afresh)";
    const int64_t width = is.value("code_width").get<int64_t>();
    if (b < features.size() && features[b] > 0 && width >= features[b])
      return "code_width = " + std::to_string(width) + " is no narrower than the " + std::to_string(features[b]) +
             " features the bottleneck at " + at + " codes; use 1.." + std::to_string(features[b] - 1);
  }
  return "";
}

void crossCheck(const Config& c, const std::string& source) {
  checkStages(c, source);
  checkCuts(c, source);
  checkBatching(c, source);
  for (char g : c.data.genres + c.data.eval_genres)
    if (g < 'a' || g > 'r')
      throw ConfigError(source + ": data.genres/data.eval_genres contain '" + std::string(1, g) +
                        "'; Brown genres are the letters a..r");
  if (c.data.image_size != 0 && c.task != "fashion_mnist")
    throw ConfigError(source + ": data.image_size = " + std::to_string(c.data.image_size) + " pads images, and task " +
                      c.task + " has none; remove it or set 0");
  if (c.eval.stop_at_accuracy > 0 && taskKind(c.task) == TaskKind::LanguageModel)
    throw ConfigError(source + ": eval.stop_at_accuracy is set but task " + c.task +
                      " is a language model, judged by perplexity, not accuracy; set it to 0");
  if (!c.eval.both_passes && !c.compression.inference)
    throw ConfigError(source +
                      ": eval.both_passes = false makes only the compressed evaluation, but compression.inference is "
                      "off, which makes the uncompressed one the run's headline; turn compression.inference on or "
                      "eval.both_passes back on");
  if (c.pipeline.cuda_graphs == "on" && c.pipeline.device == "cpu")
    throw ConfigError(source +
                      ": pipeline.cuda_graphs = on records the stages' passes as CUDA graphs, but pipeline.device is "
                      "cpu; set pipeline.device to cuda (or auto), or pipeline.cuda_graphs to auto or off");
  checkCompression(c, source);
}

}  // namespace ps
