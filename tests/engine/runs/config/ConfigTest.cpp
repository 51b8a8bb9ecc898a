#include "engine/runs/config/Config.h"
#include "engine/runs/config/ConfigSchema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ps {
namespace {

using nlohmann::json;

// Expects a ConfigError whose message contains every fragment.
void expectError(const std::function<void()>& f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    for (const auto& frag : fragments) EXPECT_NE(what.find(frag), std::string::npos) << "'" << frag << "' not in: " << what;
  }
}

void expectRejected(const json& j, std::initializer_list<std::string> fragments) {
  expectError([&] { Config::fromJson(j, "test.json"); }, fragments);
}

TEST(Config, DefaultsFillEveryKeyTheIssueNames) {
  Config c = Config::defaults();
  for (const char* key : {"train.epochs", "train.max_steps", "train.batch_size", "train.lr", "train.seed",
                          "pipeline.stages", "pipeline.microbatches", "pipeline.schedule", "link.bandwidth_mbps",
                          "link.latency_ms", "compression.forward.method", "compression.backward.method",
                          "compression.inference"})
    EXPECT_NO_THROW(configValue(c.json, key)) << key;
  EXPECT_EQ(c.pipeline.schedule, "1f1b");
  EXPECT_EQ(c.compression.forward.method, "none");
  EXPECT_TRUE(c.compression.inference);
}

TEST(Config, TypedViewFollowsTheJson) {
  Config c = Config::fromJson({{"train", {{"lr", 0.5}, {"batch_size", 32}}},
                               {"pipeline", {{"stages", 4}, {"microbatches", 8}, {"schedule", "gpipe"}}},
                               {"link", {{"bandwidth_mbps", 100}, {"mode", "throttled"}}}});
  EXPECT_DOUBLE_EQ(c.train.lr, 0.5);
  EXPECT_EQ(c.train.batch_size, 32);
  EXPECT_EQ(c.pipeline.stages, 4);
  EXPECT_EQ(c.pipeline.schedule, "gpipe");
  EXPECT_TRUE(c.link.throttled);
  EXPECT_EQ(c.compression.boundary_forward.size(), 3u);
  // The stored JSON is complete: replaying it gives the same config.
  EXPECT_EQ(Config::fromJson(c.json).json, c.json);
}

TEST(Config, UnknownKeysAreRejectedWithASuggestion) {
  expectRejected({{"train", {{"lr_rate", 0.1}}}}, {"test.json", "unknown key 'train.lr_rate'", "did you mean 'train.lr'"});
  expectRejected({{"pipline", {{"stages", 2}}}}, {"unknown key 'pipline.stages'", "pipeline.stages"});
  expectRejected({{"stages", 2}}, {"unknown key 'stages'", "pipeline.stages"});
  expectRejected({{"zzz", 1}}, {"unknown key 'zzz'"});
}

TEST(Config, EveryBadValueClassIsRejected) {
  // Wrong type.
  expectRejected({{"train", {{"batch_size", "64"}}}}, {"train.batch_size", "\"64\"", "an integer in 1 .. 65536"});
  expectRejected({{"train", {{"lr", true}}}}, {"train.lr", "a number"});
  expectRejected({{"compression", {{"inference", "yes"}}}}, {"compression.inference", "true or false"});
  expectRejected({{"data", {{"root", 5}}}}, {"data.root", "a string"});
  // Out of range.
  expectRejected({{"pipeline", {{"stages", 9}}}}, {"pipeline.stages = 9", "an integer in 1 .. 8"});
  expectRejected({{"pipeline", {{"stages", 0}}}}, {"pipeline.stages = 0"});
  expectRejected({{"train", {{"lr", -1}}}}, {"train.lr = -1"});
  expectRejected({{"link", {{"bandwidth_mbps", 0}}}}, {"link.bandwidth_mbps = 0"});
  expectRejected({{"train", {{"batch_size", 2.5}}}}, {"train.batch_size = 2.5"});
  // Not one of the choices.
  expectRejected({{"pipeline", {{"schedule", "zigzag"}}}}, {"pipeline.schedule", "one of gpipe, 1f1b"});
  expectRejected({{"compression", {{"forward", {{"method", "zip"}}}}}}, {"compression.forward.method", "one of none"});
  expectRejected({{"compression", {{"forward", {{"bits", 12}}}}}}, {"compression.forward.bits = 12", "16 for an fp16"});
  expectRejected({{"compression", {{"backward", {{"value_bits", 20}}}}}}, {"value_bits = 20"});
  expectRejected({{"compression", {{"backward", {{"feedback", "aqsgd"}}}}}},
                 {"forward activations only", "use one of none, ef, ef21, diana, randdiana"});
  expectRejected({{"compression", {{"forward", {{"k", 0}}}}}}, {"compression.forward.k = 0"});
  // Lists.
  expectRejected({{"pipeline", {{"cuts", {1, "x"}}}}}, {"pipeline.cuts", "a list of integers"});
  // Not an object at all.
  expectRejected(json::array(), {"must be a JSON object"});
}

TEST(Config, CrossFieldRulesAreChecked) {
  expectRejected({{"pipeline", {{"stages", 3}, {"balance", "explicit"}, {"cuts", {2}}}}},
                 {"pipeline.cuts has 1 entries", "needs 2"});
  expectRejected({{"pipeline", {{"stages", 3}, {"balance", "explicit"}, {"cuts", {4, 2}}}}}, {"strictly increasing"});
  expectRejected({{"pipeline", {{"cuts", {2}}}}}, {"pipeline.balance=explicit"});
  expectRejected({{"train", {{"batch_size", 4}}}, {"pipeline", {{"microbatches", 8}}}}, {"pipeline.microbatches = 8"});
  expectRejected({{"train", {{"epochs", 0}, {"max_steps", 0}}}}, {"both 0"});
  // A stage per block at most, known from the task and model.depth before anything is built.
  expectRejected({{"task", "synthetic"}, {"model", {{"depth", 3}}}, {"pipeline", {{"stages", 5}}}},
                 {"pipeline.stages = 5", "has 4 blocks", "at most 4 stages", "model.depth"});
  EXPECT_NO_THROW(Config::fromJson({{"task", "synthetic"}, {"model", {{"depth", 3}}}, {"pipeline", {{"stages", 4}}}}));
  expectRejected({{"data", {{"genres", "az"}}}}, {"'z'", "a..r"});
  // Padding is for images: a language model has none to pad.
  expectRejected({{"task", "brown_lm"}, {"data", {{"image_size", 32}}}}, {"data.image_size = 32", "brown_lm", "set 0"});
  // A language model has no accuracy to stop at; an accuracy is a fraction.
  expectRejected({{"task", "brown_lm"}, {"eval", {{"stop_at_accuracy", 0.5}}}},
                 {"eval.stop_at_accuracy", "brown_lm", "perplexity", "set it to 0"});
  expectRejected({{"eval", {{"stop_at_accuracy", 1.5}}}}, {"eval.stop_at_accuracy"});
  EXPECT_NO_THROW(Config::fromJson({{"task", "fashion_mnist"}, {"data", {{"image_size", 32}}}}));
  expectRejected({{"pipeline", {{"stages", 2}}}, {"compression", {{"boundaries", {{"3", {{"forward", {{"method", "none"}}}}}}}}}},
                 {"compression.boundaries.3", "boundaries are 0..0"});
  expectRejected({{"compression", {{"backward", {{"method", "topk"}, {"adapt", "gravac"}, {"feedback", "ef21"}}}}}},
                 {"compression.backward.feedback = ef21", "GraVAC", "use feedback ef"});
  // A learned bottleneck is a pair of layers around a boundary: set on its forward direction, never on what goes back
  // (the gradient of its code) nor between replicas.
  EXPECT_NO_THROW(Config::fromJson(
      {{"pipeline", {{"stages", 2}}},
       {"compression",
        {{"forward", {{"method", "bottleneck"}, {"code_width", 4}}}, {"backward", {{"method", "quantize"}}}}}}));
  expectRejected({{"compression", {{"backward", {{"method", "bottleneck"}}}}}},
                 {"compression.backward.method = bottleneck", "forward direction", "gradient of the code"});
  expectRejected({{"compression", {{"gradients", {{"method", "bottleneck"}}}}}},
                 {"compression.gradients.method = bottleneck", "Use another codec"});
  expectRejected({{"pipeline", {{"stages", 3}}},
                  {"compression", {{"boundaries", {{"1", {{"backward", {{"method", "bottleneck"}}}}}}}}}},
                 {"compression.boundaries.1.backward.method = bottleneck"});
}

// A preset (shared, untrusted) names checkpoint paths below the folder the run starts in only; the command line may
// name any.
TEST(Config, APresetCannotPointACheckpointOutsideItsFolder) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"checkpoint_dir", "/etc"},
                                                        {"checkpoint_file", "/root/.bashrc"},
                                                        {"checkpoint_dir", "a/../../x"},
                                                        {"checkpoint_file", "../victim.pt"}}) {
    const json preset = {{"run", {{key, value}}}};
    expectError([&] { checkPresetPaths(preset, "shared.json"); },
                {"shared.json", "run." + key, "points outside the run's folder", "--set run." + key + "="});
    EXPECT_NO_THROW(checkPresetPaths(preset, "shared.json", {"run." + key}));  // the user's own choice
  }
  EXPECT_NO_THROW(
      checkPresetPaths({{"run", {{"checkpoint_dir", ".cache/checkpoints"}, {"checkpoint_file", "a.pt"}}}}, "ok.json"));
  const auto dir = std::filesystem::temp_directory_path() / ("ps-preset-paths-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "shared.json";
  std::ofstream(file) << R"({"run": {"save_checkpoint": true, "checkpoint_dir": "/tmp/../etc"}})";
  expectError([&] { loadPreset(file.string()); }, {file.string(), "run.checkpoint_dir"});
  std::filesystem::remove_all(dir);
}

TEST(Config, PerBoundaryOverridesApplyToTheirBoundaryOnly) {
  EXPECT_NO_THROW(Config::fromJson(
      {{"pipeline", {{"stages", 3}}}, {"compression", {{"boundaries", {{"1", {{"backward", {{"method", "none"}}}}}}}}}}));
  expectRejected({{"compression", {{"boundaries", {{"x", {{"forward", {{"method", "none"}}}}}}}}}},
                 {"unknown key 'compression.boundaries.x.forward.method'"});
}

TEST(Config, OverridesParseByTheKeysType) {
  json j = json::object();
  applyOverride(j, "train.lr=0.05");
  applyOverride(j, "pipeline.stages=4");
  applyOverride(j, "compression.inference=false");
  applyOverride(j, "pipeline.schedule=gpipe");
  applyOverride(j, "pipeline.balance=explicit");
  applyOverride(j, "pipeline.cuts=2,4,6");
  Config c = Config::fromJson(j);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.05);
  EXPECT_EQ(c.pipeline.stages, 4);
  EXPECT_FALSE(c.compression.inference);
  EXPECT_EQ(c.pipeline.cuts, (std::vector<int>{2, 4, 6}));
  expectError([&] { applyOverride(j, "train.lr"); }, {"key=value"});
  expectError([&] { applyOverride(j, "train.batch_size=12abc"); }, {"train.batch_size", "'12abc'", "an integer"});
  expectError([&] { applyOverride(j, "train.lr=fast"); }, {"train.lr", "a number"});
  expectError([&] { applyOverride(j, "compression.inference=maybe"); }, {"true or false"});
  expectError([&] { applyOverride(j, "pipeline.stages=12"); }, {"pipeline.stages", "1 .. 8"});
  expectError([&] { applyOverride(j, "train.learning_rate=1"); }, {"unknown key", "train.lr"});
}

TEST(Config, SettingAValueChecksItAgainstTheSchema) {
  json j = Config::defaults().json;
  setConfigValue(j, "link.bandwidth_mbps", 5);
  EXPECT_DOUBLE_EQ(configValue(j, "link.bandwidth_mbps").get<double>(), 5.0);
  expectError([&] { setConfigValue(j, "link.bandwidth_mbps", "fast"); }, {"link.bandwidth_mbps"});
  expectError([&] { configValue(j, "nope.key"); }, {"nope.key"});
}

TEST(Config, EveryBundledPresetIsValid) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(presetDirectory())) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    EXPECT_NO_THROW(loadPreset(entry.path().string())) << entry.path();
  }
  EXPECT_GE(count, 3);
}

TEST(Config, PresetFileErrorsNameTheFile) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string bad = (dir / "pipesqueeze-bad-preset.json").string();
  std::ofstream(bad) << "{ \"train\": {\n  \"lr\": 0.1, } }";
  // Where and why, without the JSON library's error codes.
  expectError([&] { loadPreset(bad); }, {bad, "not valid JSON: error at line 2, column 14: "});
  try {
    loadPreset(bad);
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
  }
  // A claim suite opened as a preset says what it is and where it opens.
  std::ofstream(bad) << R"({"claim": "TopK keeps accuracy", "base": "fashion-mnist-4stage", "variants": []})";
  expectError([&] { loadPreset(bad); }, {bad, "is a claim suite, not a preset", "Reproduce a Claim"});
  expectError([&] { loadPreset((dir / "no-such-preset.json").string()); }, {"no-such-preset.json", "cannot open"});
  std::ofstream(bad) << R"({"train": {"lr": 99999}})";
  expectError([&] { loadPreset(bad); }, {bad, "train.lr"});
}

TEST(ConfigSchema, WildcardsMatchBoundaryIndicesOnly) {
  const auto& schema = ConfigSchema::instance();
  EXPECT_NE(schema.find("compression.boundaries.0.forward.method"), nullptr);
  EXPECT_NE(schema.find("compression.boundaries.12.backward.method"), nullptr);
  EXPECT_EQ(schema.find("compression.boundaries.a.forward.method"), nullptr);
  EXPECT_EQ(schema.find("compression.boundaries.0.sideways.method"), nullptr);
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

TEST(ConfigSchema, PresetReadmeListsEveryKey) {
  std::ifstream in(presetDirectory() + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find(ConfigSchema::instance().markdown()), std::string::npos)
      << "presets/README.md is out of date: regenerate its table with `pipesqueeze-cli keys`";
}

}  // namespace
}  // namespace ps
