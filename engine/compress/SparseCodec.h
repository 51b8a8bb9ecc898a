#pragma once
// Sparsifiers: TopK (exact), GaussianK (approximate threshold), sampled threshold (DGC) and RandK (seeded, no indices
// on the wire): one codec with four selectors. Indices travel in the cheapest of 32-bit, delta+varint or bitmap;
// values in float32, fp16 or quantized again (value_bits). TopK, GaussianK and the sampled threshold share a payload
// format (and id), so a receiver of one decodes the others.
// This header is torch-free: the catalogue reads the entries' specs without the engine.
#include "engine/compress/CodecEntry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ps {

// How many values a sparsifier keeps of n at density K: k = max(1, round(K n)), as docs/algorithms.md defines it.
inline uint64_t sparseKeep(double K, uint64_t n) {
  return std::min<uint64_t>(n, std::max<uint64_t>(1, uint64_t(std::llround(K * double(n)))));
}

struct TopKEntry {
  static MethodSpec spec() { return sparsifierSpec("topk", "TopK", "the k largest magnitudes exactly", {}, 7); }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

struct RandKEntry {
  static MethodSpec spec() {
    return sparsifierSpec("randk", "RandK", "k values drawn at random (the indices travel as a seed)", {"scaled"}, 8);
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

struct GaussianKEntry {
  static MethodSpec spec() {
    return sparsifierSpec("gaussiank", "GaussianK", "values above a threshold estimated from a normal fit", {"trim"},
                          7);
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

struct SampledKEntry {
  static MethodSpec spec() {
    return sparsifierSpec("sampledk", "Sampled threshold", "DGC: the threshold of a random sample, trimmed to k",
                          {"sample"}, 7);
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
