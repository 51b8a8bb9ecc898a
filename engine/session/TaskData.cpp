#include "engine/session/TaskData.h"

#include "engine/data/BrownCorpus.h"
#include "engine/data/CharVocab.h"
#include "engine/data/FashionMnist.h"
#include "engine/data/Synthetic.h"

#include <torch/torch.h>

#include <cstring>

namespace ps {
namespace {

int64_t limited(int64_t available, int64_t limit) { return limit > 0 ? std::min(available, limit) : available; }

// Images as float [N, 1, H, W], standardised with Fashion-MNIST's global statistics; with `side` > 0, padded with
// background (black, before standardising) to side x side, the image centred (any odd pixel goes right and below).
void imagesToTensors(const data::ImageSet& set, int64_t limit, int64_t side, torch::Tensor& x, torch::Tensor& y) {
  const int64_t n = limited(set.count, limit);
  auto pixels = torch::from_blob(const_cast<uint8_t*>(set.pixels.data()), {n, 1, set.rows, set.cols}, torch::kUInt8);
  if (side > 0) {
    if (side < set.rows || side < set.cols)
      throw ConfigError("data.image_size = " + std::to_string(side) + " is smaller than the images (" +
                        std::to_string(set.rows) + "x" + std::to_string(set.cols) +
                        "), which are padded, never cropped; use 0 or at least " +
                        std::to_string(std::max(set.rows, set.cols)));
    const int64_t top = (side - set.rows) / 2, left = (side - set.cols) / 2;
    pixels = torch::constant_pad_nd(pixels, {left, side - set.cols - left, top, side - set.rows - top}, 0);
  }
  x = (pixels.to(torch::kFloat32) / 255.0 - 0.2860) / 0.3530;
  y = torch::from_blob(const_cast<uint8_t*>(set.labels.data()), {n}, torch::kUInt8).to(torch::kInt64);
}

// Non-overlapping windows of `context + 1` tokens: inputs are the first `context`, targets the next.
void windowsToTensors(const std::vector<int32_t>& tokens, int64_t context, int64_t limit, torch::Tensor& x,
                      torch::Tensor& y) {
  const int64_t windows = tokens.size() > size_t(context) ? int64_t(tokens.size() - 1) / context : 0;
  if (windows == 0) throw ConfigError("the text is shorter than data.context; lower data.context or add genres");
  const int64_t n = limited(windows, limit);
  auto all = torch::from_blob(const_cast<int32_t*>(tokens.data()), {int64_t(tokens.size())}, torch::kInt32)
                 .to(torch::kInt64);
  auto starts = torch::arange(n, torch::kInt64) * context;
  auto offsets = torch::arange(context, torch::kInt64);
  auto index = starts.unsqueeze(1) + offsets.unsqueeze(0);
  x = all.index_select(0, index.reshape({-1})).reshape({n, context});
  y = all.index_select(0, (index + 1).reshape({-1})).reshape({n, context});
}

TaskData fashion(const Config& c) {
  const std::string root = c.data.root.empty() ? data::FashionMnist::defaultRoot() : c.data.root;
  TaskData d;
  imagesToTensors(data::FashionMnist::load(root, true), c.data.train_limit, c.data.image_size, d.train_x, d.train_y);
  imagesToTensors(data::FashionMnist::load(root, false), c.data.eval_limit, c.data.image_size, d.eval_x, d.eval_y);
  d.shape.kind = TaskKind::Classifier;
  d.shape.outputs = data::FashionMnist::kClasses;
  d.shape.input_channels = 1;
  d.shape.input_height = d.train_x.size(2);
  d.shape.input_width = d.train_x.size(3);
  d.description = "Fashion-MNIST from " + root;
  return d;
}

std::string joined(const std::vector<data::BrownCorpus::Document>& docs) {
  std::string text;
  for (const auto& doc : docs) text += doc.text + "\n\n";
  return text;
}

TaskData brown(const Config& c, const std::string& vocabText) {
  const std::string root = c.data.root.empty() ? data::BrownCorpus::defaultRoot() : c.data.root;
  auto docs = data::BrownCorpus::load(root, c.data.genres);
  std::vector<data::BrownCorpus::Document> train, eval;
  if (!c.data.eval_genres.empty()) {
    train = docs;
    eval = data::BrownCorpus::load(root, c.data.eval_genres);
  } else {
    // Every k-th document is held out, so each genre is represented on both sides.
    const size_t every = std::max<size_t>(2, size_t(1.0 / c.data.eval_fraction + 0.5));
    const size_t held = std::min(every, docs.size());  // a small genre still holds out its last document
    for (size_t i = 0; i < docs.size(); ++i) (i % held == held - 1 ? eval : train).push_back(docs[i]);
    if (train.empty() || eval.empty())
      throw ConfigError("data.genres = '" + c.data.genres + "' has too few documents to hold some out; add genres");
  }
  const std::string trainText = joined(train), evalText = joined(eval);
  auto vocab = vocabText.empty() ? data::CharVocab::build(trainText) : data::CharVocab::deserialize(vocabText);
  TaskData d;
  windowsToTensors(vocab.encode(trainText), c.data.context, c.data.train_limit, d.train_x, d.train_y);
  windowsToTensors(vocab.encode(evalText), c.data.context, c.data.eval_limit, d.eval_x, d.eval_y);
  d.vocab = vocab.serialize();
  d.shape.kind = TaskKind::LanguageModel;
  d.shape.outputs = vocab.size();
  d.shape.context = c.data.context;
  d.description = "Brown corpus genres '" + (c.data.genres.empty() ? std::string("a-r") : c.data.genres) + "': " +
                  std::to_string(train.size()) + " documents to train, " + std::to_string(eval.size()) +
                  " to evaluate, " + std::to_string(vocab.size()) + " characters";
  return d;
}

TaskData synthetic(const Config& c) {
  const int features = 16, classes = 4;
  const int n = int(c.data.synthetic_samples);
  const int heldOut = std::max(16, n / 5);
  // One draw split in two, so both sides share the class centres.
  auto all = data::makeClassification(n + heldOut, features, classes, c.train.seed);
  auto x = torch::from_blob(all.x.data(), {n + heldOut, features}, torch::kFloat32).clone();
  auto y = torch::from_blob(all.y.data(), {n + heldOut}, torch::kInt32).to(torch::kInt64);
  TaskData d;
  d.train_x = x.slice(0, 0, limited(n, c.data.train_limit));
  d.train_y = y.slice(0, 0, limited(n, c.data.train_limit));
  d.eval_x = x.slice(0, n, n + limited(heldOut, c.data.eval_limit));
  d.eval_y = y.slice(0, n, n + limited(heldOut, c.data.eval_limit));
  d.shape.kind = TaskKind::Classifier;
  d.shape.input_features = features;
  d.shape.outputs = classes;
  d.description = "synthetic Gaussian blobs: " + std::to_string(n) + " samples, 16 features, 4 classes";
  return d;
}

}  // namespace

TaskData loadTaskData(const Config& config, const std::string& vocab) {
  if (config.task == "fashion_mnist") return fashion(config);
  if (config.task == "brown_lm") return brown(config, vocab);
  return synthetic(config);
}

}  // namespace ps
