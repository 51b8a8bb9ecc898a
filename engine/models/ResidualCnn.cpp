#include "engine/models/ResidualCnn.h"

#include <torch/torch.h>

#include <algorithm>

namespace ps {
namespace {

namespace nn = torch::nn;

int64_t groupsFor(int64_t channels) { return std::max<int64_t>(1, std::min<int64_t>(8, channels / 4)); }

nn::Conv2d conv3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

struct ConvNormImpl : nn::Module {
  ConvNormImpl(int64_t in, int64_t out, int64_t stride)
      : conv(register_module("conv", conv3(in, out, stride))),
        norm(register_module("norm", nn::GroupNorm(groupsFor(out), out))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(norm(conv(x))); }
  nn::Conv2d conv;
  nn::GroupNorm norm;
};
TORCH_MODULE(ConvNorm);

struct ResidualImpl : nn::Module {
  explicit ResidualImpl(int64_t c)
      : conv1(register_module("conv1", conv3(c, c, 1))),
        norm1(register_module("norm1", nn::GroupNorm(groupsFor(c), c))),
        conv2(register_module("conv2", conv3(c, c, 1))),
        norm2(register_module("norm2", nn::GroupNorm(groupsFor(c), c))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(norm1(conv1(x)));
    return torch::relu(x + norm2(conv2(h)));
  }
  nn::Conv2d conv1;
  nn::GroupNorm norm1;
  nn::Conv2d conv2;
  nn::GroupNorm norm2;
};
TORCH_MODULE(Residual);

// Flatten + linear: keeps where in the image a feature fired, which global pooling would discard.
struct FlatHeadImpl : nn::Module {
  FlatHeadImpl(int64_t features, int64_t classes) : fc(register_module("fc", nn::Linear(features, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc(x.flatten(1)); }
  nn::Linear fc;
};
TORCH_MODULE(FlatHead);

// Output size of a 3x3 convolution with padding 1 and stride 2.
int64_t halved(int64_t size) { return (size + 1) / 2; }

}  // namespace

void appendResidualCnn(BlockModel& model, const ModelShape& shape, int64_t width, int64_t depth) {
  // Residual blocks spread over the three resolutions, the later ones getting any remainder.
  const int64_t per[3] = {depth / 3, depth / 3 + (depth % 3 > 1 ? 1 : 0), depth / 3 + (depth % 3 > 0 ? 1 : 0)};
  auto add = [&](std::string name, torch::nn::AnyModule m) {
    model.blocks.push_back(std::move(m));
    model.names.push_back(std::move(name));
  };
  add("stem", torch::nn::AnyModule(ConvNorm(shape.input_channels, width, 1)));
  int64_t c = width, h = shape.input_height, w = shape.input_width;
  for (int level = 0; level < 3; ++level) {
    if (level > 0) {
      add("down" + std::to_string(level), torch::nn::AnyModule(ConvNorm(c, 2 * c, 2)));
      c *= 2;
      h = halved(h);
      w = halved(w);
    }
    for (int64_t i = 0; i < per[level]; ++i)
      add("res" + std::to_string(level) + "." + std::to_string(i), torch::nn::AnyModule(Residual(c)));
  }
  add("head", torch::nn::AnyModule(FlatHead(c * h * w, shape.outputs)));
}

}  // namespace ps
