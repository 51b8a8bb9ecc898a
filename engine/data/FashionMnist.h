#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ps::data {

// A set of grey-scale images with one class label each.
struct ImageSet {
  int count = 0;
  int rows = 0;
  int cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major, 0 = background
  std::vector<uint8_t> labels;  // count, each < FashionMnist::kClasses
};

// Loader for Fashion-MNIST in its original gzip-compressed IDX files:
//   train-images-idx3-ubyte.gz  train-labels-idx1-ubyte.gz   (60000 images)
//   t10k-images-idx3-ubyte.gz   t10k-labels-idx1-ubyte.gz    (10000 images)
// Uncompressed copies without the .gz suffix are accepted as well.
class FashionMnist {
 public:
  static constexpr int kClasses = 10;

  // $PIPESQUEEZE_FASHION_MNIST if set and non-empty, else /usr/share/datasets/fashion-mnist.
  static std::string defaultRoot();

  // Loads the training (train = true) or test split from `root`.
  // Throws DataError naming the file and the install command on any problem.
  static ImageSet load(const std::string& root, bool train);

  // Human-readable class name ("T-shirt/top", "Trouser", ...); throws DataError for label >= 10.
  static std::string className(int label);
};

}  // namespace ps::data
