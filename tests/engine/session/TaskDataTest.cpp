#include "engine/session/TaskData.h"

#include "engine/data/FashionMnist.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/Config.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

namespace ps {
namespace {

bool fashionInstalled() {
  return std::filesystem::exists(data::FashionMnist::defaultRoot() + "/t10k-images-idx3-ubyte.gz") ||
         std::filesystem::exists(data::FashionMnist::defaultRoot() + "/t10k-images-idx3-ubyte");
}

Config fashion(int64_t side) {
  return Config::fromJson(
      {{"task", "fashion_mnist"}, {"data", {{"train_limit", 8}, {"eval_limit", 8}, {"image_size", side}}}});
}

// Padding for models built for 32x32 inputs: the stored image sits in the middle of a black border, and the model is
// built for the padded size.
TEST(TaskData, FashionMnistImagesArePaddedWithBackgroundToTheSideAsked) {
  if (!fashionInstalled()) GTEST_SKIP() << "Fashion-MNIST not installed; run ./setup.sh (dataset-fashion-mnist)";
  const TaskData plain = loadTaskData(fashion(0));
  ASSERT_EQ(plain.train_x.sizes(), (std::vector<int64_t>{8, 1, 28, 28}));
  for (int64_t side : {32, 33}) {
    const TaskData padded = loadTaskData(fashion(side));
    EXPECT_EQ(padded.train_x.sizes(), (std::vector<int64_t>{8, 1, side, side}));
    EXPECT_EQ(padded.eval_x.sizes(), (std::vector<int64_t>{8, 1, side, side}));
    EXPECT_EQ(padded.shape.input_height, side);
    EXPECT_EQ(padded.shape.input_width, side);
    EXPECT_TRUE(torch::equal(padded.train_y, plain.train_y));
    // The image itself, unchanged, two pixels in from the top left (an odd pixel goes right and below).
    EXPECT_TRUE(torch::equal(padded.train_x.slice(2, 2, 30).slice(3, 2, 30), plain.train_x));
    // The border is what a black pixel standardises to.
    const float black = plain.train_x.min().item<float>();
    EXPECT_EQ(padded.train_x.slice(2, 0, 2).max().item<float>(), black);
    EXPECT_EQ(padded.train_x.slice(3, 30, side).max().item<float>(), black);
  }
}

TEST(TaskData, AnImageSizeBelowTheImagesIsRefusedNamingTheSmallestThatWorks) {
  if (!fashionInstalled()) GTEST_SKIP() << "Fashion-MNIST not installed; run ./setup.sh (dataset-fashion-mnist)";
  try {
    loadTaskData(fashion(27));
    FAIL() << "a 27-pixel side was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("data.image_size = 27"), std::string::npos) << what;
    EXPECT_NE(what.find("28x28"), std::string::npos) << what;
    EXPECT_NE(what.find("at least 28"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ps
