#include "engine/data/FashionMnist.h"

#include "engine/data/DataError.h"
#include "engine/data/IdxReader.h"
#include "engine/data/InstallHints.h"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ps::data {
namespace fs = std::filesystem;

namespace {

std::string hint() {
  return std::string(kFashionMnistInstallHint) + ", or set " + kFashionMnistEnvVar +
         " to a folder holding the four Fashion-MNIST .gz files";
}

[[noreturn]] void fail(const std::string& what) {
  throw DataError("Fashion-MNIST: " + what + "; " + hint());
}

// Prefers the .gz file; falls back to an uncompressed copy if only that exists.
std::string locate(const fs::path& root, const std::string& stem) {
  const fs::path gz = root / (stem + ".gz");
  std::error_code ec;
  if (!fs::exists(gz, ec)) {
    const fs::path plain = root / stem;
    if (fs::is_regular_file(plain, ec)) return plain.string();
  }
  return gz.string();
}

}  // namespace

std::string FashionMnist::defaultRoot() {
  const char* env = std::getenv(kFashionMnistEnvVar);
  if (env && *env) return env;
  return kFashionMnistSystemRoot;
}

ImageSet FashionMnist::load(const std::string& root, bool train) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) fail("folder '" + root + "' not found");

  const std::string prefix = train ? "train" : "t10k";
  const std::string imagesPath = locate(root, prefix + "-images-idx3-ubyte");
  const std::string labelsPath = locate(root, prefix + "-labels-idx1-ubyte");

  IdxArray images = readIdx(imagesPath, hint());
  IdxArray labels = readIdx(labelsPath, hint());

  if (images.dims.size() != 3)
    fail("'" + imagesPath + "' has " + std::to_string(images.dims.size()) +
         " dimensions, expected 3 (count x rows x cols)");
  if (labels.dims.size() != 1)
    fail("'" + labelsPath + "' has " + std::to_string(labels.dims.size()) + " dimensions, expected 1 (count)");
  if (images.dims[0] != labels.dims[0])
    fail("'" + imagesPath + "' holds " + std::to_string(images.dims[0]) + " images but '" + labelsPath + "' holds " +
         std::to_string(labels.dims[0]) + " labels (files from different splits?)");
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kClasses)
      fail("'" + labelsPath + "' has label " + std::to_string(labels.data[i]) + " at index " + std::to_string(i) +
           ", expected 0.." + std::to_string(kClasses - 1));
  }

  ImageSet set;
  set.count = images.dims[0];
  set.rows = images.dims[1];
  set.cols = images.dims[2];
  set.pixels = std::move(images.data);
  set.labels = std::move(labels.data);
  return set;
}

std::string FashionMnist::className(int label) {
  static const std::array<const char*, kClasses> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                          "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  if (label < 0 || label >= kClasses)
    throw DataError("Fashion-MNIST has no class " + std::to_string(label) + " (labels are 0.." +
                    std::to_string(kClasses - 1) + ")");
  return names[static_cast<std::size_t>(label)];
}

}  // namespace ps::data
