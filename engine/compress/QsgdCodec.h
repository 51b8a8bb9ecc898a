#pragma once
// QSGD (Alistarh et al., 2017) with s levels per bucket: x_hat = |x|_2 sign(x) xi / s, xi the stochastic rounding of
// s|x| / |x|_2, so that the codec is unbiased with a known variance bound.
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct QsgdEntry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("qsgd", "QSGD", "s levels of the bucket's norm, stochastically rounded (unbiased)", 5);
    m.options = {"levels", "bucket"};
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
