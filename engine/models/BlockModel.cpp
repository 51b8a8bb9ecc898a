#include "engine/models/BlockModel.h"

#include "engine/models/ResidualCnn.h"
#include "engine/models/TransformerLm.h"

#include <torch/torch.h>

namespace ps {
namespace {

struct DenseReluImpl : torch::nn::Module {
  DenseReluImpl(int64_t in, int64_t out, bool relu) : fc(register_module("fc", torch::nn::Linear(in, out))), relu(relu) {}
  torch::Tensor forward(const torch::Tensor& x) { return relu ? torch::relu(fc(x)) : fc(x); }
  torch::nn::Linear fc;
  bool relu;
};
TORCH_MODULE(DenseRelu);

// The synthetic task's model: an MLP with one block per layer.
void appendMlp(BlockModel& model, const ModelShape& shape, int64_t width, int64_t depth) {
  int64_t in = shape.input_features;
  for (int64_t i = 0; i < depth; ++i) {
    model.blocks.emplace_back(DenseRelu(in, width, true));
    model.names.push_back("dense" + std::to_string(i));
    in = width;
  }
  model.blocks.emplace_back(DenseRelu(in, shape.outputs, false));
  model.names.push_back("head");
}

}  // namespace

int64_t BlockModel::parameterCount(size_t block) const {
  int64_t n = 0;
  for (const auto& p : blocks.at(block).ptr()->parameters()) n += p.numel();
  return n;
}

BlockModel buildModel(const Config& config, const ModelShape& shape, uint64_t seed) {
  torch::manual_seed(seed);
  BlockModel model;
  model.kind = shape.kind;
  model.outputs = shape.outputs;
  const auto& m = config.model;
  if (config.task == "fashion_mnist") appendResidualCnn(model, shape, m.width, m.depth);
  else if (config.task == "brown_lm") appendTransformerLm(model, shape, m.width, m.depth, m.heads);
  else appendMlp(model, shape, m.width, m.depth);
  return model;
}

torch::Tensor lossOf(TaskKind kind, const torch::Tensor& output, const torch::Tensor& target) {
  if (kind == TaskKind::LanguageModel)
    return torch::nn::functional::cross_entropy(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
  return torch::nn::functional::cross_entropy(output, target);
}

int64_t correctOf(TaskKind kind, const torch::Tensor& output, const torch::Tensor& target) {
  return hitsOf(kind, output, target).item<int64_t>();
}

torch::Tensor hitsOf(TaskKind, const torch::Tensor& output, const torch::Tensor& target) {
  // Classifiers: correct labels; language models: correct next tokens.
  return output.argmax(-1).eq(target).sum();
}

}  // namespace ps
