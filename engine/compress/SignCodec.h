#pragma once
// Scaled sign (signSGD with a scale, as in EF-signSGD): x_hat = (|x|_1 / n) sign(x), one bit a value and one float.
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct SignEntry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("sign", "Scaled sign", "one bit a value, scaled by the mean magnitude", 6);
    m.valueBits = 1;
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
