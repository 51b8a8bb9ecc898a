#include "engine/models/StageModule.h"

#include <torch/torch.h>

namespace ps {

StageModule::StageModule(const BlockModel& model, size_t first, size_t last) : first_(first), last_(last) {
  for (size_t i = first; i < last; ++i) {
    blocks_.push_back(model.blocks[i]);
    register_module("b" + std::to_string(i), model.blocks[i].ptr());
  }
}

void StageModule::attach(const std::shared_ptr<Bottleneck>& in, const std::shared_ptr<Bottleneck>& out) {
  if (in) decoder_ = register_module(in->decoderName(), in->decoder);
  if (out) encoder_ = register_module(out->encoderName(), out->encoder);
}

torch::Tensor StageModule::forward(torch::Tensor x) {
  if (decoder_) x = decoder_->forward(x);
  for (auto& block : blocks_) x = block.forward<torch::Tensor>(x);
  if (encoder_) {
    beforeCode_ = x;
    x = encoder_->forward(x);
  }
  return x;
}

}  // namespace ps
