#pragma once
// Q_b quantization: b-bit codes with a scale per tensor, per channel (dimension 1 of a 4-d activation, the last one
// otherwise) or per bucket; symmetric max-abs or min-max, nearest or stochastic rounding. At 16 bits an fp16 cast.
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct QuantizeEntry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("quantize", "Quantize",
                             "b-bit codes with a scale per tensor, channel or bucket (16 bits: an fp16 cast)", 4);
    m.options = {"bits", "rounding", "scale", "bucket", "range"};
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
