#include "engine/models/TransformerLm.h"

#include <torch/torch.h>

#include <cmath>

namespace ps {
namespace {

namespace nn = torch::nn;

struct EmbeddingImpl : nn::Module {
  EmbeddingImpl(int64_t vocab, int64_t context, int64_t d)
      : tokens(register_module("tokens", nn::Embedding(vocab, d))),
        positions(register_parameter("positions", torch::randn({context, d}) * 0.02)) {
    nn::init::normal_(tokens->weight, 0.0, 0.02);
  }
  torch::Tensor forward(const torch::Tensor& ids) {
    const int64_t t = ids.size(1);
    return tokens(ids) + positions.slice(0, 0, t).unsqueeze(0);
  }
  nn::Embedding tokens;
  torch::Tensor positions;
};
TORCH_MODULE(Embedding);

struct DecoderBlockImpl : nn::Module {
  DecoderBlockImpl(int64_t d, int64_t heads)
      : heads(heads),
        ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({d})))),
        qkv(register_module("qkv", nn::Linear(d, 3 * d))),
        proj(register_module("proj", nn::Linear(d, d))),
        ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({d})))),
        fc1(register_module("fc1", nn::Linear(d, 4 * d))),
        fc2(register_module("fc2", nn::Linear(4 * d, d))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / heads;
    auto parts = qkv(ln1(x)).view({b, t, 3, heads, hd}).permute({2, 0, 3, 1, 4});  // 3, b, h, t, hd
    auto q = parts[0], k = parts[1], v = parts[2];
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(hd));
    auto mask = torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    auto attn = torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({b, t, d});
    auto h = x + proj(attn);
    return h + fc2(torch::gelu(fc1(ln2(h))));
  }

  int64_t heads;
  nn::LayerNorm ln1;
  nn::Linear qkv, proj;
  nn::LayerNorm ln2;
  nn::Linear fc1, fc2;
};
TORCH_MODULE(DecoderBlock);

struct LmHeadImpl : nn::Module {
  LmHeadImpl(int64_t d, int64_t vocab)
      : ln(register_module("ln", nn::LayerNorm(nn::LayerNormOptions({d})))),
        out(register_module("out", nn::Linear(d, vocab))) {}
  torch::Tensor forward(const torch::Tensor& x) { return out(ln(x)); }
  nn::LayerNorm ln;
  nn::Linear out;
};
TORCH_MODULE(LmHead);

}  // namespace

void appendTransformerLm(BlockModel& model, const ModelShape& shape, int64_t width, int64_t depth, int64_t heads) {
  if (width % heads != 0)
    throw ConfigError("model.width = " + std::to_string(width) + " must be a multiple of model.heads = " +
                      std::to_string(heads));
  model.blocks.emplace_back(Embedding(shape.outputs, shape.context, width));
  model.names.push_back("embed");
  for (int64_t i = 0; i < depth; ++i) {
    model.blocks.emplace_back(DecoderBlock(width, heads));
    model.names.push_back("block" + std::to_string(i));
  }
  model.blocks.emplace_back(LmHead(width, shape.outputs));
  model.names.push_back("head");
}

}  // namespace ps
