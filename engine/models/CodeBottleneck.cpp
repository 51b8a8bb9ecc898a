#include "engine/models/CodeBottleneck.h"

#include "engine/errors/ConfigError.h"

#include <torch/torch.h>

#include <cstring>
#include <stdexcept>

namespace ps {

CodeProjectionImpl::CodeProjectionImpl(torch::Tensor weight, int64_t dim, bool trained) : dim_(dim) {
  weight_ = trained ? register_parameter("weight", std::move(weight)) : register_buffer("weight", std::move(weight));
}

// Every form keeps the layout of its input and its gradient (an image's channels through a 1x1 convolution rather than
// a permuted product), so the blocks around it compute exactly as they would without it.
torch::Tensor CodeProjectionImpl::forward(torch::Tensor x) {
  if (dim_ == x.dim() - 1) return torch::matmul(x, weight_.t());
  if (x.dim() == 4 && dim_ == 1) return torch::conv2d(x, weight_.unsqueeze(-1).unsqueeze(-1));
  return torch::matmul(x.movedim(dim_, -1), weight_.t()).movedim(-1, dim_).contiguous();
}

int64_t featureDimension(const std::vector<int64_t>& sample) {
  return sample.size() == 3 ? 0 : int64_t(sample.size()) - 1;
}

torch::Tensor orthonormalColumns(int64_t features, int64_t width, uint64_t seed, int boundary) {
  // The QR factor of a Gaussian matrix, drawn from the run seed, the boundary and the width alone.
  auto generator =
      at::detail::createCPUGenerator(seed * 0x9E3779B97F4A7C15ULL + uint64_t(boundary) + 1 + (uint64_t(width) << 32));
  torch::NoGradGuard noGrad;
  auto gaussian = at::randn({features, width}, generator, torch::kFloat64);
  return std::get<0>(torch::linalg_qr(gaussian)).to(torch::kFloat32).contiguous();  // LAPACK's is by column
}

std::shared_ptr<Bottleneck> makeBottleneck(const CompressionOptions& options, int boundary,
                                           const std::vector<int64_t>& sample, uint64_t seed) {
  const std::string where = "compression.forward (boundary " + std::to_string(boundary) + ")";
  if (sample.empty())
    throw ConfigError(where +
                      ".method = bottleneck needs an activation with a feature dimension at the boundary, "
                      "and the model sends a scalar per sample there; cut the model elsewhere");
  auto b = std::make_shared<Bottleneck>();
  b->boundary = boundary;
  const int64_t dim = featureDimension(sample);
  b->features = sample[size_t(dim)];
  b->width = options.value("code_width").get<int64_t>();
  b->init = options.value("code_init").get<std::string>();
  if (b->width >= b->features)
    throw ConfigError(where + ".code_width = " + std::to_string(b->width) + " is no narrower than the " +
                      std::to_string(b->features) + " " + (sample.size() == 3 ? "channels" : "hidden units") +
                      " the boundary's activations have, so it would compress nothing; use 1.." +
                      std::to_string(b->features - 1));
  torch::Tensor q = orthonormalColumns(b->features, b->width, seed, boundary);
  const bool trained = b->init != "random";
  b->encoder = CodeProjection(q.t().contiguous(), dim + 1, trained);
  b->decoder = CodeProjection(q.clone(), dim + 1, trained);
  return b;
}

void initFromPrincipalComponents(Bottleneck& b, const torch::Tensor& activations) {
  torch::NoGradGuard noGrad;
  const int64_t dim = b.encoder->dim();
  auto rows = activations.detach().to(torch::kCPU, torch::kFloat64).movedim(dim, -1).reshape({-1, b.features});
  // The eigenvectors of the second moment, largest last: without a bias, the uncentred moment is what a linear code
  // keeps best.
  auto [values, vectors] = torch::linalg_eigh(torch::matmul(rows.t(), rows));
  auto top = vectors.narrow(1, b.features - b.width, b.width).flip({1}).to(torch::kFloat32);
  b.encoder->weight().copy_(top.t());
  b.decoder->weight().copy_(top);
}

std::vector<uint8_t> decoderWeights(const Bottleneck& b) {
  const torch::Tensor w = b.decoder->weight().detach().to(torch::kCPU, torch::kFloat).contiguous();
  const auto* bytes = static_cast<const uint8_t*>(w.data_ptr());
  return std::vector<uint8_t>(bytes, bytes + w.numel() * int64_t(sizeof(float)));
}

void checkDecoderWeights(const Bottleneck& b, size_t bytes) {
  const int64_t expected = b.features * b.width * int64_t(sizeof(float));
  if (int64_t(bytes) != expected)
    throw std::invalid_argument("the decoder weights of boundary " + std::to_string(b.boundary) + " are " +
                                std::to_string(bytes) + " bytes, not the " + std::to_string(expected) + " of a " +
                                std::to_string(b.features) + " x " + std::to_string(b.width) + " decoder");
}

void loadDecoderWeights(const Bottleneck& b, const std::vector<uint8_t>& bytes) {
  checkDecoderWeights(b, bytes.size());
  const torch::Tensor w = b.decoder->weight();
  torch::NoGradGuard noGrad;
  auto cpu = torch::empty(w.sizes(), torch::kFloat);
  std::memcpy(cpu.data_ptr(), bytes.data(), bytes.size());
  w.copy_(cpu);
}

}  // namespace ps
