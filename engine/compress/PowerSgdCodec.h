#pragma once
// PowerSGD (Vogels, Karimireddy & Jaggi, NeurIPS 2019; the low-rank compressor PyTorch ships as a DDP
// communication hook): a tensor viewed as an n x m matrix M (rows = its first dimension) travels as a rank-r
// approximation P Q^T, found by one step of power iteration per message warm-started from the previous message's Q.
// docs/algorithms.md has the algorithm; error feedback comes from the compensation wrapped around it (feedback=ef).
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct PowerSgdEntry {
  static MethodSpec spec() {
    MethodSpec m{"powersgd", "PowerSGD", "rank-r approximation by one warm-started power iteration a message",
                 {"rank", "min_size"}, {}, false, false, 9};
    m.own = {intOption("rank", 4, 1, 64, "Rank", "PowerSGD: rank r of the approximation P Q^T",
                       OptionSpec::Control::Slider),
             intOption("min_size", 1024, 0, 1 << 30, "Dense below",
                       "PowerSGD: tensors with fewer elements (or whose factors would not be smaller) travel dense")};
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
