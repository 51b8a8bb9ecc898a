#pragma once
// PowerSGD (Vogels, Karimireddy & Jaggi, NeurIPS 2019; the low-rank compressor PyTorch ships as a DDP
// communication hook): a tensor viewed as an n x m matrix M (rows = its first dimension) travels as a rank-r
// approximation P Q^T, found by one step of power iteration per message warm-started from the previous message's Q.
// docs/algorithms.md has the algorithm; error feedback comes from the compensation wrapped around it (feedback=ef).
// Between data-parallel replicas the exchange runs PowerSGD as PyTorch's hook does instead, with factors shared by
// all-reduce (engine/pipeline/PowerSgdReducer.h).
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct PowerSgdEntry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("powersgd", "PowerSGD", "rank-r approximation by one warm-started power iteration a message",
                             9);
    m.options = {"rank", "min_size", "start_iter", "min_rate"};
    m.own = {intOption("rank", 4, 1, 64, "Rank", "PowerSGD: rank r of the approximation P Q^T",
                       OptionSpec::Control::Slider),
             intOption("min_size", 1024, 0, 1 << 30, "Dense below",
                       "PowerSGD on a link: tensors with fewer elements (or whose factors would not be smaller) "
                       "travel dense"),
             intOption("start_iter", 10, 0, 1000000, "Dense steps",
                       "PowerSGD between replicas: a plain all-reduce for the first steps (PyTorch's "
                       "start_powerSGD_iter)"),
             realOption("min_rate", 2, 1, 1000, "Least rate",
                        "PowerSGD between replicas: a tensor that rank r would not compress by this factor is "
                        "all-reduced whole (PyTorch's min_compression_rate)")};
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
