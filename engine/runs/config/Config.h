#pragma once
// A validated run configuration: the full JSON (every key, defaults filled in) plus typed views of it.
// The JSON is what a run store keeps, so any run can be replayed exactly.
#include "engine/compress/spec/CompressionOptions.h"
#include "engine/core/Direction.h"
#include "engine/core/LinkModel.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/PresetSearch.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ps {

struct Config {
  nlohmann::json json;  // complete and validated

  std::string task;
  struct Run {
    std::string name, tags, notes, checkpoint_dir, checkpoint_file;
    bool save_checkpoint = false;
  } run;
  struct Train {
    int64_t epochs = 1, max_steps = 0, batch_size = 64, warmup_steps = 0, threads = 0;
    uint64_t seed = 1;
    double lr = 1e-3, momentum = 0.9, weight_decay = 0;
    std::string optimizer, lr_schedule;
  } train;
  struct Data {
    std::string root, genres, eval_genres;
    int64_t train_limit = 0, eval_limit = 0, context = 64, synthetic_samples = 1024;
    double eval_fraction = 0.1;
    int64_t image_size = 0;  // Fashion-MNIST images padded to this side (0: their own 28)
  } data;
  struct Model {
    int64_t width = 32, depth = 4, heads = 4;
    std::string init_checkpoint;
  } model;
  struct Pipeline {
    int stages = 1, microbatches = 1;
    std::string schedule, balance, device;
    std::string device_reads = "auto";
    bool stage_streams = true, stream_check = false;
    std::string cuda_graphs = "off";
    std::vector<int> cuts;
  } pipeline;
  struct Parallel {
    int replicas = 1;
    std::string mode = "auto";
    double timeout_s = 120;
    std::string backend = "auto";
    std::string transport = "tcp";
    bool processes() const { return mode == "processes" || (mode == "auto" && replicas > 1); }
  } parallel;
  LinkModel link;  // link.*: link.mode = throttled, link.framing = tcp, link.egress = stage
  struct Compression {
    CompressionOptions forward, backward;
    CompressionOptions gradients;  // weight gradients among a stage's data-parallel replicas
    bool inference = true;
    int64_t aqsgd_warmup_epochs = 1;
    double aqsgd_memory_limit_mb = 4096;
    // Per-boundary overrides, filled for boundaries 0..stages-2 (the defaults above where none is given).
    std::vector<CompressionOptions> boundary_forward, boundary_backward;

    // What a link direction sends: boundary `boundary`'s forward or backward options, or the replicas' weight
    // gradients (Direction::Gradients; the boundary is then ignored).
    const CompressionOptions& of(int boundary, Direction d) const;
    // The config key of one of its options: compression.boundaries.N.forward.<option>, compression.gradients.<option>.
    static std::string key(int boundary, Direction d, const std::string& option);
  } compression;
  struct Eval {
    int64_t every_steps = 200, batch_size = 500, max_batches = 0;
    bool both_passes = true;      // false: only the headline pass (compression.inference picks it)
    double stop_at_accuracy = 0;  // end the run once the headline accuracy reaches it (0: never)
  } eval;
  struct Telemetry {
    int64_t histogram_every = 50, histogram_bins = 64;
    int64_t timeline_every = 1;  // wall-clock times in the step trace every N steps (0: never)
  } telemetry;

  // Validates `user` (a partial or full config): unknown keys, wrong types and out-of-range values raise
  // ConfigError naming the key, the value and what is allowed. `source` names where it came from.
  static Config fromJson(const nlohmann::json& user, const std::string& source = "config");
  static Config defaults() { return fromJson(nlohmann::json::object()); }
};

// How many blocks the model of `task` at `depth` (model.depth) is made of, the most stages it can be cut into: the
// residual CNN has a stem, two downsampling blocks, `depth` residual blocks and a head; the transformer an embedding,
// `depth` decoder blocks and a head; the synthetic task's MLP `depth` layers and a head. buildModel makes exactly
// these (a test holds the two together).
int modelBlocks(const std::string& task, int64_t depth);

// Paths a preset names for writing (run.checkpoint_dir, run.checkpoint_file) stay below the folder the run starts in:
// a preset is shared and untrusted, and one that points at an absolute path or climbs out with ".." could overwrite
// any file the user can write. Throws ConfigError naming the key, unless the key is in `fromCommandLine` (the user
// gave it: --set may choose any path).
void checkPresetPaths(const nlohmann::json& preset, const std::string& source,
                      const std::vector<std::string>& fromCommandLine = {});

// Reads a preset file (JSON, comments not allowed) and validates it (paths included); errors name the file.
Config loadPreset(const std::string& path);
nlohmann::json readJsonFile(const std::string& path);

// Applies "dot.path=value" to a JSON config (value parsed by the key's type). Throws ConfigError.
void applyOverride(nlohmann::json& config, const std::string& assignment);

// Reads or sets one key of a JSON config by dot path; setConfigValue checks the value against the schema.
nlohmann::json configValue(const nlohmann::json& config, const std::string& key);  // throws for a missing key
nlohmann::json configValueOrNull(const nlohmann::json& config, const std::string& key);
void setConfigValue(nlohmann::json& config, const std::string& key, const nlohmann::json& value);

}  // namespace ps
