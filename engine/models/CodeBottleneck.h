#pragma once
// The layers of a learned bottleneck on a pipeline boundary (the codec that carries its code is
// engine/compress/BottleneckCodec.h): the sending stage ends in a projection of its output's feature dimension (an
// image's channels, a sequence's or a vector's hidden units) from `features` to `width`, the receiving stage begins
// with the projection back. Both are bias-free linear maps, trained by their stage's optimizer unless the bottleneck
// is the fixed random projection, whose weights are buffers (nothing learns them, a checkpoint need not keep them:
// the run seed draws them again).
#include "engine/compress/spec/CompressionOptions.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ps {

// One half: x's feature dimension `dim` (counted with the batch dimension first) mapped by weight [out, in].
class CodeProjectionImpl : public torch::nn::Module {
 public:
  CodeProjectionImpl(torch::Tensor weight, int64_t dim, bool trained);
  torch::Tensor forward(torch::Tensor x);
  const torch::Tensor& weight() const { return weight_; }
  int64_t dim() const { return dim_; }

 private:
  torch::Tensor weight_;
  int64_t dim_;
};
TORCH_MODULE(CodeProjection);

struct Bottleneck {
  int boundary = 0;
  int64_t features = 0, width = 0;
  std::string init;  // learned, pca, random
  CodeProjection encoder{nullptr}, decoder{nullptr};
  // The names its halves take in their stages (and so in checkpoints): code<boundary>_enc and code<boundary>_dec.
  std::string encoderName() const { return "code" + std::to_string(boundary) + "_enc"; }
  std::string decoderName() const { return "code" + std::to_string(boundary) + "_dec"; }
};

// Which dimension of one sample's activation shape (no batch dimension) a bottleneck projects: the channels of an
// image ([C, H, W]: 0), the hidden units of a sequence or a vector (the last).
int64_t featureDimension(const std::vector<int64_t>& sample);

// The bottleneck `options` (a boundary's forward options whose codec has layers) asks for at `boundary`, where one
// sample's activation has shape `sample`: a random orthogonal projection drawn from `seed` and the boundary (the same
// on every rank and replica), its decoder the encoder's transpose. Throws ConfigError when the code would be no
// narrower than the features it codes, naming the widest code that works.
std::shared_ptr<Bottleneck> makeBottleneck(const CompressionOptions& options, int boundary,
                                           const std::vector<int64_t>& sample, uint64_t seed);
// A features x width matrix with orthonormal columns drawn from the run seed, the boundary and the width: the random
// start of a bottleneck's encoder (its transpose) and decoder.
torch::Tensor orthonormalColumns(int64_t features, int64_t width, uint64_t seed, int boundary);
// Sets a bottleneck's projections to the top principal directions of `activations` (a batch as the boundary sees it
// before the encoder): the encoder takes the `width` directions that keep the most of the activations' second
// moment, the decoder puts them back (its transpose), the best rank-`width` linear code of that batch.
void initFromPrincipalComponents(Bottleneck& b, const torch::Tensor& activations);

// The decoder's weights as float32 bytes (row-major in the weight's shape), as a step report carries them to the
// process of the sending stage, and back into that process's copy of the decoder. Loading refuses bytes that are not
// exactly the weight's size (std::invalid_argument naming both); they come from another process.
// checkDecoderWeights() is that check alone (every rank runs it on every report; only the sending stage's loads).
// A decoder larger than kMostSharedDecoderBytes (a 4096 x 64 one) is not sent: every rank receives every report.
inline constexpr int64_t kMostSharedDecoderBytes = int64_t(1) << 20;
inline bool sharesDecoder(const Bottleneck& b) {
  return b.features * b.width * int64_t(sizeof(float)) <= kMostSharedDecoderBytes;
}
std::vector<uint8_t> decoderWeights(const Bottleneck& b);
void checkDecoderWeights(const Bottleneck& b, size_t bytes);
void loadDecoderWeights(const Bottleneck& b, const std::vector<uint8_t>& bytes);

}  // namespace ps
