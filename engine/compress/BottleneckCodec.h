#pragma once
// A learned bottleneck on a pipeline boundary: the sending stage ends in a linear projection of its output's channels
// (or hidden units) to `code_width`, the receiving stage begins with the projection back, both trained by the stages'
// own optimizers (engine/models/CodeBottleneck.h holds the layers). What crosses the link forward is the code, and
// backward the gradient of the code, which has the code's size, so both directions shrink by channels / code_width.
// This codec is what travels: the code's values as a value block (float32, fp16, or quantized again by value_bits).
// docs/algorithms.md has the method and its three starts (learned, principal components, a fixed random projection).
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct BottleneckEntry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("bottleneck", "Learned bottleneck",
                             "forward only: a trainable projection to code_width channels at the sender and back at "
                             "the receiver; the code crosses, and backward its gradient (none or another codec)",
                             10);
    m.layers = true;
    m.options = {"code_width", "code_init", "value_bits", "rounding", "range", "bucket"};
    m.requantizing = {"rounding", "range", "bucket"};
    m.own = {intOption("code_width", 16, 1, 8192, "Code width",
                       "bottleneck (forward only): channels (or hidden units) of the code that crosses the "
                       "boundary; backward then carries the code's gradient, which compression.backward may compress",
                       OptionSpec::Control::Slider),
             choiceOption("code_init", "learned", {"learned", "pca", "random"}, "Code start",
                          "bottleneck: learned (random orthogonal start, trained), pca (the first batch's principal "
                          "directions, trained) or random (a fixed random orthogonal projection, not trained)")};
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
