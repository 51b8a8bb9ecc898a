#include "engine/runs/config/Config.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/ConfigChecks.h"
#include "engine/runs/config/ConfigSchema.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace ps {
namespace {

using nlohmann::json;
using Type = KeySpec::Type;
using Json = nlohmann::json;  // Config has a member named json

std::string pointer(const std::string& dotted) {
  std::string p = "/" + dotted;
  for (auto& c : p)
    if (c == '.') c = '/';
  return p;
}

// Sets a value by dot path, creating objects on the way (a JSON pointer would create arrays for "0", "1").
void setPath(Json& root, const std::string& dotted, Json value) {
  Json* node = &root;
  size_t from = 0;
  for (size_t dot = dotted.find('.'); ; dot = dotted.find('.', from)) {
    const std::string segment = dotted.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!node->is_object()) *node = Json::object();
    node = &(*node)[segment];
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  *node = std::move(value);
}

void flatten(const json& node, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (node.is_object() && !node.empty()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out.emplace_back(prefix, node);
  }
}

[[noreturn]] void unknownKey(const std::string& key, const std::string& source) {
  std::string msg = source + ": unknown key '" + key + "'";
  std::string hint = ConfigSchema::instance().closest(key);
  if (!hint.empty()) msg += "; did you mean '" + hint + "'?";
  else msg += "; see presets/README.md for the keys";
  throw ConfigError(msg);
}

[[noreturn]] void badValue(const KeySpec& spec, const std::string& key, const json& value, const std::string& source) {
  const std::string shown = value.dump(-1, ' ', false, json::error_handler_t::replace);  // never throws on bad UTF-8
  throw ConfigError(source + ": " + key + " = " + shown + " is not allowed: expected " + spec.allowed());
}

bool inRange(const KeySpec& spec, double v) { return std::isfinite(v) && v >= spec.min && v <= spec.max; }

json checkValue(const KeySpec& spec, const std::string& key, const json& v, const std::string& source) {
  switch (spec.type) {
    case Type::Int:
      if (v.is_number_integer() && inRange(spec, v.get<double>())) return v;
      if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && inRange(spec, v.get<double>()))
        return json(static_cast<long long>(v.get<double>()));
      break;
    case Type::Double:
      if (v.is_number() && inRange(spec, v.get<double>())) return json(v.get<double>());
      break;
    case Type::Bool:
      if (v.is_boolean()) return v;
      break;
    case Type::String:
      if (v.is_string() && !validUtf8(v.get<std::string>()))
        throw ConfigError(source + ": " + key + " is not valid UTF-8 text; write it in UTF-8 (the run store and every "
                          "export keep text as UTF-8)");
      if (v.is_string()) return v;
      break;
    case Type::Enum:
      if (v.is_string())
        for (const auto& c : spec.choices)
          if (c == v.get<std::string>()) return v;
      break;
    case Type::IntList:
      if (v.is_array()) {
        for (const auto& item : v)
          if (!item.is_number_integer() || !inRange(spec, item.get<double>())) badValue(spec, key, v, source);
        return v;
      }
      break;
  }
  badValue(spec, key, v, source);
}

CompressionOptions compressionAt(const Json& j, const std::string& dotted) {
  return CompressionOptions::fromJson(j.at(Json::json_pointer(pointer(dotted))));
}

CompressionOptions overrideOf(const Json& j, const std::string& dotted, CompressionOptions base) {
  auto ptr = Json::json_pointer(pointer(dotted));
  return j.contains(ptr) ? CompressionOptions::fromJson(j.at(ptr), base) : base;
}

// The user's keys checked one by one and laid over the defaults: every key of the schema is present afterwards.
Json completeConfig(const nlohmann::json& user, const std::string& source) {
  if (!user.is_object()) throw ConfigError(source + ": a configuration must be a JSON object");
  const auto& schema = ConfigSchema::instance();
  Json full = schema.defaults();
  std::vector<std::pair<std::string, Json>> leaves;
  flatten(user, "", leaves);
  for (const auto& [key, value] : leaves) {
    if (key.empty()) continue;  // an empty object at the top
    const KeySpec* spec = schema.find(key);
    if (!spec) unknownKey(key, source);
    setPath(full, key, checkValue(*spec, key, value, source));
  }
  return full;
}

Config::Train trainOf(const Json& t) {
  Config::Train train;
  train.epochs = t["epochs"];
  train.max_steps = t["max_steps"];
  train.batch_size = t["batch_size"];
  train.warmup_steps = t["warmup_steps"];
  train.threads = t["threads"];
  train.seed = t["seed"].get<uint64_t>();
  train.lr = t["lr"];
  train.momentum = t["momentum"];
  train.weight_decay = t["weight_decay"];
  train.optimizer = t["optimizer"];
  train.lr_schedule = t["lr_schedule"];
  return train;
}

Config::Pipeline pipelineOf(const Json& p) {
  Config::Pipeline pipeline;
  pipeline.stages = p["stages"];
  pipeline.microbatches = p["microbatches"];
  pipeline.schedule = p["schedule"];
  pipeline.balance = p["balance"];
  pipeline.device = p["device"];
  pipeline.device_reads = p["device_reads"];
  pipeline.stage_streams = p["stage_streams"];
  pipeline.stream_check = p["stream_check"];
  pipeline.cuda_graphs = p["cuda_graphs"];
  pipeline.cuts = p["cuts"].get<std::vector<int>>();
  return pipeline;
}

// The three directions, and each boundary's own forward and backward (its override, or the direction's setting).
Config::Compression compressionOf(const Json& j, int stages) {
  Config::Compression c;
  c.forward = compressionAt(j, "compression.forward");
  c.backward = compressionAt(j, "compression.backward");
  c.gradients = compressionAt(j, "compression.gradients");
  c.inference = j["compression"]["inference"];
  c.aqsgd_warmup_epochs = j["compression"]["aqsgd_warmup_epochs"];
  c.aqsgd_memory_limit_mb = j["compression"]["aqsgd_memory_limit_mb"];
  for (int b = 0; b + 1 < stages; ++b) {
    std::string at = "compression.boundaries." + std::to_string(b);
    c.boundary_forward.push_back(overrideOf(j, at + ".forward", c.forward));
    c.boundary_backward.push_back(overrideOf(j, at + ".backward", c.backward));
  }
  return c;
}

}  // namespace

const CompressionOptions& Config::Compression::of(int boundary, Direction d) const {
  if (d == Direction::Gradients) return gradients;
  return (d == Direction::Forward ? boundary_forward : boundary_backward).at(size_t(boundary));
}

std::string Config::Compression::key(int boundary, Direction d, const std::string& option) {
  if (d == Direction::Gradients) return "compression.gradients." + option;
  return "compression.boundaries." + std::to_string(boundary) + (d == Direction::Forward ? ".forward." : ".backward.") +
         option;
}

Config Config::fromJson(const nlohmann::json& user, const std::string& source) {
  Config c;
  c.json = completeConfig(user, source);
  const Json& j = c.json;
  c.task = j["task"];
  c.run = {j["run"]["name"], j["run"]["tags"], j["run"]["notes"], j["run"]["checkpoint_dir"], j["run"]["checkpoint_file"],
           j["run"]["save_checkpoint"]};
  c.train = trainOf(j["train"]);
  const Json& d = j["data"];
  c.data = {d["root"],       d["genres"],  d["eval_genres"],       d["train_limit"],
            d["eval_limit"], d["context"], d["synthetic_samples"], d["eval_fraction"],
            d["image_size"]};
  const Json& m = j["model"];
  c.model = {m["width"], m["depth"], m["heads"], m["init_checkpoint"]};
  c.pipeline = pipelineOf(j["pipeline"]);
  const Json& l = j["link"];
  c.link.bandwidth_mbps = l["bandwidth_mbps"];
  c.link.latency_ms = l["latency_ms"];
  c.link.throttled = l["mode"] == "throttled";
  c.link.tcp = l["framing"] == "tcp";
  c.link.shared_egress = l["egress"] == "stage";
  c.compression = compressionOf(j, c.pipeline.stages);
  c.parallel = {j["parallel"]["replicas"], j["parallel"]["mode"], j["parallel"]["timeout_s"], j["parallel"]["backend"],
                j["parallel"]["transport"]};
  const Json& e = j["eval"];
  c.eval = {e["every_steps"], e["batch_size"], e["max_batches"], e["both_passes"], e["stop_at_accuracy"]};
  c.telemetry = {j["telemetry"]["histogram_every"], j["telemetry"]["histogram_bins"], j["telemetry"]["timeline_every"]};
  crossCheck(c, source);
  return c;
}

int modelBlocks(const std::string& task, int64_t depth) {
  const int64_t extra = task == "fashion_mnist" ? 4 : task == "brown_lm" ? 2 : 1;
  return static_cast<int>(std::min<int64_t>(depth + extra, std::numeric_limits<int>::max()));
}

json readJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot open '" + path + "': " + std::strerror(errno) + "; check the path");
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxJsonBytes)  // refused before it is read into memory
    throw ConfigError("'" + path + "' holds " + std::to_string(size >> 20) + " MiB, more than the " +
                      std::to_string(kMaxJsonBytes >> 20) + " MiB of JSON the lab reads; it is not a preset or a suite");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parseJson(buffer.str(), "'" + path + "'");
}

void checkPresetPaths(const json& preset, const std::string& source, const std::vector<std::string>& fromCommandLine) {
  for (const char* key : {"run.checkpoint_dir", "run.checkpoint_file"}) {
    if (std::find(fromCommandLine.begin(), fromCommandLine.end(), key) != fromCommandLine.end()) continue;
    const json value = configValueOrNull(preset, key);
    if (!value.is_string() || value.get<std::string>().empty()) continue;
    const std::filesystem::path path(value.get<std::string>());
    std::string why;
    if (path.is_absolute() || path.has_root_name() || path.has_root_directory()) why = "it is an absolute path";
    for (const auto& part : path)
      if (part == "..") why = "it climbs out with \"..\"";
    if (why.empty()) continue;
    throw ConfigError(source + ": " + key + " = " + value.dump() + " points outside the run's folder (" + why +
                      "); a preset may only name a path below the folder the run starts in. To write there, give "
                      "it on the command line: --set " +
                      key + "=" + value.get<std::string>());
  }
}

Config loadPreset(const std::string& path) {
  const json j = readJsonFile(path);
  if (j.is_object() && j.contains("variants") && j.contains("claim"))
    throw ConfigError("'" + path +
                      "' is a claim suite, not a preset: open it with Runs ▸ Reproduce a Claim… in the app, " +
                      "or run it with pipesqueeze-cli suite run " + path);
  Config c = Config::fromJson(j, path);
  checkPresetPaths(j, path);
  return c;
}

void applyOverride(json& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set '" + assignment + "' must look like key=value, for example --set train.lr=0.01");
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  const KeySpec* spec = ConfigSchema::instance().find(key);
  if (!spec) unknownKey(key, "--set");
  json value;
  auto fail = [&] {
    throw ConfigError("--set " + key + "=" + text + ": '" + text + "' is not " + spec->allowed());
  };
  switch (spec->type) {
    case Type::Int: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end || errno) fail();
      value = v;
      break;
    }
    case Type::Double: {
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || errno) fail();
      value = v;
      break;
    }
    case Type::Bool:
      if (text == "true" || text == "1") value = true;
      else if (text == "false" || text == "0") value = false;
      else fail();
      break;
    case Type::IntList:
      value = parseJsonOrDiscarded(text.empty() || text.front() != '[' ? "[" + text + "]" : text);
      if (value.is_discarded()) fail();
      break;
    default: value = text;
  }
  setPath(config, key, checkValue(*spec, key, value, "--set"));
}

json configValue(const json& config, const std::string& key) {
  auto ptr = json::json_pointer(pointer(key));
  if (!config.contains(ptr)) throw ConfigError("no key '" + key + "' in this configuration");
  return config.at(ptr);
}

json configValueOrNull(const json& config, const std::string& key) {
  auto ptr = json::json_pointer(pointer(key));
  return config.contains(ptr) ? config.at(ptr) : json();
}

void setConfigValue(json& config, const std::string& key, const json& value) {
  const KeySpec* spec = ConfigSchema::instance().find(key);
  if (!spec) unknownKey(key, "setting");
  setPath(config, key, checkValue(*spec, key, value, "setting"));
}

}  // namespace ps
