#include "engine/runs/config/ConfigSchema.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/core/Metrics.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace ps {
namespace {

using Type = KeySpec::Type;
using nlohmann::json;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// A boundary index as the lab writes it: canonical ("0", "12"; not "00" or "+1"), at most three digits.
bool isIndex(const std::string& s) {
  return !s.empty() && s.size() <= 3 && (s.size() == 1 || s[0] != '0') &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

KeySpec integer(std::string path, long long def, double lo, double hi, std::string help) {
  return {std::move(path), Type::Int, json(def), lo, hi, {}, std::move(help)};
}
KeySpec real(std::string path, double def, double lo, double hi, std::string help) {
  return {std::move(path), Type::Double, json(def), lo, hi, {}, std::move(help)};
}
KeySpec boolean(std::string path, bool def, std::string help) {
  return {std::move(path), Type::Bool, json(def), 0, 0, {}, std::move(help)};
}
KeySpec text(std::string path, std::string def, std::string help) {
  return {std::move(path), Type::String, json(std::move(def)), 0, 0, {}, std::move(help)};
}
KeySpec choice(std::string path, std::string def, std::vector<std::string> choices, std::string help) {
  return {std::move(path), Type::Enum, json(std::move(def)), 0, 0, std::move(choices), std::move(help)};
}

// The settings of one compressed direction (forward activations, backward gradients, a boundary's override), read
// from the compression catalogue: a codec added there has its keys here. Keys under a boundary override have no
// default: what is not given there comes from the direction.
KeySpec fromCatalogue(const std::string& path, const OptionSpec& o) {
  switch (o.type) {
    case OptionSpec::Type::Int: return {path, Type::Int, o.fallback, o.min, o.max, {}, o.help};
    case OptionSpec::Type::Double: return {path, Type::Double, o.fallback, o.min, o.max, {}, o.help};
    case OptionSpec::Type::Bool: return {path, Type::Bool, o.fallback, 0, 0, {}, o.help};
    case OptionSpec::Type::Choice: return {path, Type::Enum, o.fallback, 0, 0, o.choices, o.help};
  }
  return {};
}

void addDirection(std::vector<KeySpec>& keys, const std::string& prefix, bool withDefaults) {
  std::vector<KeySpec> d;
  d.push_back(choice(prefix + ".method", "none", catalogue::names(catalogue::codecs()), "codec for this direction"));
  d.push_back(choice(prefix + ".feedback", "none", catalogue::names(catalogue::compensations()),
                     "error compensation wrapped around the codec"));
  d.push_back(choice(prefix + ".adapt", "none", catalogue::names(catalogue::controllers()),
                     "adapt a sparsifier's K during the run (GraVAC, Accordion); every change is an event"));
  for (const auto& o : catalogue::options()) d.push_back(fromCatalogue(prefix + "." + o.name, o));
  for (auto& k : d) {
    if (!withDefaults) k.fallback = nullptr;
    keys.push_back(std::move(k));
  }
}

// What to train and how the run is named and kept.
void addRunKeys(std::vector<KeySpec>& k) {
  std::vector<std::string> taskNames;
  for (const auto& t : tasks()) taskNames.push_back(t.name);
  k.push_back(choice("task", "fashion_mnist", taskNames, "what to train"));

  k.push_back(text("run.name", "", "run name shown in the runs table (default: task and stage count)"));
  k.push_back(text("run.tags", "", "comma-separated tags"));
  k.push_back(text("run.notes", "", "free text"));
  k.push_back(boolean("run.save_checkpoint", false, "save the trained model at the end (for fine-tuning)"));
  k.push_back(text("run.checkpoint_dir", "", "folder for checkpoints (default: beside the run store)"));
  k.push_back(text("run.checkpoint_file", "", "checkpoint file name (default: run-ID.pt in run.checkpoint_dir)"));
}

// The optimiser and how long to train.
void addTrainKeys(std::vector<KeySpec>& k) {
  k.push_back(integer("train.epochs", 1, 0, 1000, "passes over the training data (0: train.max_steps decides)"));
  k.push_back(integer("train.max_steps", 0, 0, 1e9, "stop after this many steps (0: no limit)"));
  k.push_back(integer("train.batch_size", 64, 1, 65536, "samples per optimizer step"));
  k.push_back(real("train.lr", 1e-3, 1e-8, 1000, "learning rate"));
  k.push_back(choice("train.optimizer", "adam", {"adam", "adamw", "sgd"}, "optimizer of every stage"));
  k.push_back(real("train.momentum", 0.9, 0, 0.999, "SGD momentum"));
  k.push_back(real("train.weight_decay", 0, 0, 1, "weight decay"));
  k.push_back(choice("train.lr_schedule", "constant", {"constant", "cosine"}, "learning-rate schedule"));
  k.push_back(integer("train.warmup_steps", 0, 0, 1e7, "linear warm-up steps"));
  k.push_back(integer("train.seed", 1, 0, 9007199254740991.0, "seed every random choice derives from"));
  k.push_back(integer("train.threads", 0, 0, 256, "CPU threads in all (0: every core)"));
}

// Which data, and the size of the model.
void addDataAndModelKeys(std::vector<KeySpec>& k) {
  k.push_back(text("data.root", "", "data folder (default: the installed package)"));
  k.push_back(integer("data.train_limit", 0, 0, 1e9, "use only the first N training samples (0: all)"));
  k.push_back(integer("data.eval_limit", 0, 0, 1e9, "evaluate on the first N held-out samples (0: all)"));
  k.push_back(text("data.genres", "", "Brown genres to train on, letters a..r (empty: all)"));
  k.push_back(text("data.eval_genres", "", "Brown genres to evaluate on (empty: held-out documents of data.genres)"));
  k.push_back(real("data.eval_fraction", 0.1, 0.01, 0.5, "share of Brown documents held out for evaluation"));
  k.push_back(integer("data.context", 64, 4, 2048, "language-model context length in characters"));
  k.push_back(integer("data.synthetic_samples", 1024, 16, 1e7, "samples of the synthetic task"));
  k.push_back(integer("data.image_size", 0, 0, 512,
                      "Fashion-MNIST: side the 28x28 images are padded to, centred on black (0: 28, as stored)"));

  k.push_back(integer("model.width", 32, 4, 4096, "channels (CNN) or model dimension (LM)"));
  k.push_back(integer("model.depth", 4, 1, 64, "residual or transformer blocks"));
  k.push_back(integer("model.heads", 4, 1, 64, "attention heads (LM)"));
  k.push_back(text("model.init_checkpoint", "", "initialise from this checkpoint (fine-tuning)"));
}

// How the model is cut into stages, replicated and connected.
void addPlacementKeys(std::vector<KeySpec>& k) {
  k.push_back(integer("pipeline.stages", 1, 1, 8, "pipeline stages, one worker each"));
  k.push_back(integer("pipeline.microbatches", 1, 1, 1024, "micro-batches per step"));
  k.push_back(choice("pipeline.schedule", "1f1b", {"gpipe", "1f1b"}, "pipeline schedule"));
  k.push_back(choice("pipeline.balance", "params", {"params", "compute", "explicit"}, "how stages are cut"));
  k.push_back({"pipeline.cuts", Type::IntList, json::array(), 1, 64, {}, "first block of stages 2..S (explicit)"});
  k.push_back(choice("pipeline.device", "cpu", {"cpu", "cuda", "auto"}, "where stages run"));
  k.push_back(boolean("pipeline.stage_streams", true,
                      "on a GPU, each stage queues its work on a CUDA stream of its own, so that stages sharing a GPU "
                      "overlap, and hands tensors over with events; off: every stage on the device's default stream"));
  k.push_back(boolean("pipeline.stream_check", false,
                      "check the stream discipline as the run goes (slower; a debugging aid): every link send and "
                      "receive on its stage's thread and stream, every message read only after its fence was waited "
                      "for; a break stops the run, naming it"));
  k.push_back(
      choice("pipeline.cuda_graphs", "off", {"auto", "on", "off"},
             "on a GPU, each stage records its forward and backward passes as CUDA graphs, one pair per "
             "micro-batch slot and input shape, and replays them; auto: a stage that cannot be recorded (on the "
             "CPU, ending in a bottleneck's encoder, on the default stream) runs eagerly, saying why; on: such "
             "a stage is refused; under either a recording that fails stops the run"));
  k.push_back(
      choice("pipeline.device_reads", "auto", {"auto", "step", "message"},
             "when the per-message figures (compression errors, norms, the last stage's loss and hits) and "
             "the codecs' finiteness checks are read from the stages' devices: once per step, or as each message "
             "is made (auto: once per step "
             "on CUDA, where every read waits for the device, as made on the CPU, where reading costs nothing)"));

  k.push_back(integer("parallel.replicas", 1, 1, 64,
                      "data-parallel replicas of every stage, each on its own shard of the batch (one process each)"));
  k.push_back(choice("parallel.mode", "auto", {"auto", "threads", "processes"},
                     "stages as threads of one process, or one process per stage and replica (auto: processes "
                     "when replicas > 1)"));
  k.push_back(choice("parallel.backend", "auto", {"auto", "gloo", "nccl"},
                     "how CUDA stages of different processes talk: the replicas' dense gradient all-reduce and the "
                     "payloads between stages, through Gloo or NCCL (auto: NCCL when the stages are on CUDA, the "
                     "build has NCCL and the ranks it joins have GPUs of their own; CPU stages always use Gloo)"));
  k.push_back(choice("parallel.transport", "tcp", {"tcp", "gloo"},
                     "how payloads between stages of different processes travel when NCCL does not carry them: a "
                     "TCP connection per link direction that streams each payload as it is sent, overlapping the "
                     "receiver's compute as the link model assumes, or Gloo's point-to-point messages, which move a "
                     "payload only once the receiver asks for it (round trips per message)"));
  k.push_back(real("parallel.timeout_s", 120, 1, 86400,
                   "multi-process: a rank silent for longer is declared failed and the run stops"));

  k.push_back(real("link.bandwidth_mbps", 10000, 0.001, 1e7, "emulated link bandwidth in Mbit/s"));
  k.push_back(real("link.latency_ms", 0, 0, 60000, "emulated latency per message in ms"));
  k.push_back(choice("link.mode", "accounted", {"accounted", "throttled"},
                     "accounted adds modelled time to an emulated clock; throttled really waits"));
  k.push_back(choice("link.framing", "tcp", {"tcp", "none"},
                     "what a message costs on the wire: tcp adds TCP/IPv4/Ethernet headers per 1448-byte segment "
                     "(95.6% of the rate is payload), none is an ideal link"));
  k.push_back(choice("link.egress", "link", {"link", "stage"},
                     "where messages leave: link gives every link direction a wire of its own; stage sends all of a "
                     "stage's messages (activations on, gradients back) through one interface, as from a host with "
                     "one network card"));
}

// What crosses each link, and how it is compressed.
void addCompressionKeys(std::vector<KeySpec>& k) {
  addDirection(k, "compression.forward", true);
  addDirection(k, "compression.backward", true);
  addDirection(k, "compression.gradients", true);
  addDirection(k, "compression.boundaries.*.forward", false);
  addDirection(k, "compression.boundaries.*.backward", false);
  k.push_back(boolean("compression.inference", true, "evaluate through the compressed links too"));
  k.push_back(integer("compression.aqsgd_warmup_epochs", 1, 0, 1000, "AQ-SGD: epochs sent uncompressed first"));
  k.push_back(real("compression.aqsgd_memory_limit_mb", 4096, 1e-6, 1e7, "AQ-SGD: refuse runs whose buffers need more"));
}

// Evaluation and what telemetry records.
void addEvalKeys(std::vector<KeySpec>& k) {
  k.push_back(integer("eval.every_steps", 200, 0, 1e9, "evaluate every N steps (0: only at the end)"));
  k.push_back(integer("eval.batch_size", 500, 1, 65536, "evaluation batch size"));
  k.push_back(integer("eval.max_batches", 0, 0, 1e9, "evaluation batches per pass (0: all)"));
  k.push_back(boolean("eval.both_passes", true,
                      "evaluate through the compressed and the uncompressed links (false: through the compressed "
                      "ones only, half the traffic of an evaluation on a slow link; needs compression.inference)"));
  k.push_back(real("eval.stop_at_accuracy", 0, 0, 1,
                   "end the run at the first evaluation whose headline accuracy reaches this (0: never; classifiers "
                   "only); the run is kept as stopped, with the reason"));

  k.push_back(integer("telemetry.histogram_every", 50, 0, 1e9, "histograms every N steps (0: never)"));
  k.push_back(integer("telemetry.histogram_bins", 64, 4, 1024, "bins per histogram"));
  k.push_back(integer("telemetry.timeline_every", 1, 0, 1e9,
                      "the timeline's wall-clock times every N steps (0: never; the emulated timeline is kept for "
                      "every step)"));
}

}  // namespace

bool KeySpec::matches(const std::string& dotted) const {
  if (path.find('*') == std::string::npos) return path == dotted;
  auto want = split(path, '.');
  auto have = split(dotted, '.');
  if (want.size() != have.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "*" ? !isIndex(have[i]) : want[i] != have[i]) return false;
  }
  return true;
}

std::string KeySpec::allowed() const {
  switch (type) {
    case Type::Int: return "an integer in " + number(min) + " .. " + number(max);
    case Type::Double: return "a number in " + number(min) + " .. " + number(max);
    case Type::Bool: return "true or false";
    case Type::String: return "a string";
    case Type::IntList: return "a list of integers in " + number(min) + " .. " + number(max) + ", like [2, 5]";
    case Type::Enum: {
      std::string s = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      return s;
    }
  }
  return "";
}

ConfigSchema::ConfigSchema() {
  addRunKeys(keys_);
  addTrainKeys(keys_);
  addDataAndModelKeys(keys_);
  addPlacementKeys(keys_);
  addCompressionKeys(keys_);
  addEvalKeys(keys_);
}

const ConfigSchema& ConfigSchema::instance() {
  static const ConfigSchema schema;
  return schema;
}

const KeySpec* ConfigSchema::find(const std::string& dotted) const {
  for (const auto& k : keys_)
    if (k.matches(dotted)) return &k;
  return nullptr;
}

std::string ConfigSchema::closest(const std::string& dotted) const {
  auto lastSegment = [](const std::string& p) { return p.substr(p.rfind('.') + 1); };
  auto section = [](const std::string& p) { return p.substr(0, p.find('.')); };
  auto initials = [](const std::string& word) {  // "learning_rate" -> "lr"
    std::string out;
    for (size_t i = 0; i < word.size(); ++i)
      if (i == 0 || word[i - 1] == '_') out += word[i];
    return out;
  };
  std::string best;
  size_t bestScore = std::max<size_t>(3, dotted.size() / 3) + 1;
  for (const auto& k : keys_) {
    if (k.path.find('*') != std::string::npos) continue;
    size_t score = editDistance(dotted, k.path);
    const bool sameSection = section(dotted) == section(k.path);
    if (lastSegment(dotted) == lastSegment(k.path)) score = 1;  // right name, wrong place
    else if (dotted.rfind(k.path, 0) == 0 && dotted.size() > k.path.size() && dotted[k.path.size()] == '_') score = 2;
    else if (sameSection && initials(lastSegment(dotted)) == lastSegment(k.path)) score = 2;
    if (score < bestScore) {
      bestScore = score;
      best = k.path;
    }
  }
  return best;
}

json ConfigSchema::defaults() const {
  json out = json::object();
  for (const auto& k : keys_) {
    if (k.fallback.is_null()) continue;
    out[json::json_pointer("/" + [&] {
      std::string p = k.path;
      std::replace(p.begin(), p.end(), '.', '/');
      return p;
    }())] = k.fallback;
  }
  return out;
}

std::string ConfigSchema::markdown() const {
  std::string out = "| key | default | allowed | meaning |\n|---|---|---|---|\n";
  for (const auto& k : keys_) {
    const std::string def = k.fallback.is_null() ? "(the direction's setting)" : k.fallback.dump();
    out += "| `" + k.path + "` | `" + def + "` | " + k.allowed() + " | " + k.help + " |\n";
  }
  return out;
}

}  // namespace ps
