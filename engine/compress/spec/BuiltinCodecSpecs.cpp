// Catalogue entries of the codecs the lab started with (their factories are in engine/compress/CodecFactory.cpp).
#include "engine/compress/BuiltinCodecs.h"

namespace ps {
namespace {

// A sparsifier's values can be quantized again: these options then apply to them.
const std::vector<std::string> kValueOptions = {"value_bits", "rounding", "range", "bucket"};

MethodSpec sparsifier(std::string name, std::string label, std::string help, std::vector<std::string> extra,
                      int payload) {
  MethodSpec m{std::move(name), std::move(label), std::move(help), {"k"}, {}, true, false, payload};
  m.options.insert(m.options.end(), extra.begin(), extra.end());
  m.options.insert(m.options.end(), kValueOptions.begin(), kValueOptions.end());
  return m;
}

}  // namespace

MethodSpec IdentityEntry::spec() { return {"none", "none", "float32 values as they are", {}, {}, false, false, 1}; }
MethodSpec Fp16Entry::spec() { return {"fp16", "fp16", "IEEE half precision, 16 bits a value", {}, {}, false, false, 2}; }
MethodSpec Bf16Entry::spec() { return {"bf16", "bf16", "bfloat16, 16 bits a value", {}, {}, false, false, 3}; }
MethodSpec QuantizeEntry::spec() {
  return {"quantize", "Quantize",
          "b-bit codes with a scale per tensor, channel or bucket (16 bits: an fp16 cast)",
          {"bits", "rounding", "scale", "bucket", "range"}, {}, false, false, 4};
}
MethodSpec QsgdEntry::spec() {
  return {"qsgd", "QSGD", "s levels of the bucket's norm, stochastically rounded (unbiased)", {"levels", "bucket"}, {},
          false, false, 5};
}
MethodSpec SignEntry::spec() { return {"sign", "Scaled sign", "one bit a value, scaled by the mean magnitude", {}, {}, false, false, 6}; }
MethodSpec TopKEntry::spec() { return sparsifier("topk", "TopK", "the k largest magnitudes exactly", {}, 7); }
MethodSpec RandKEntry::spec() {
  return sparsifier("randk", "RandK", "k values drawn at random (the indices travel as a seed)", {"scaled"}, 8);
}
MethodSpec GaussianKEntry::spec() {
  return sparsifier("gaussiank", "GaussianK", "values above a threshold estimated from a normal fit", {"trim"}, 7);
}
MethodSpec SampledKEntry::spec() {
  return sparsifier("sampledk", "Sampled threshold", "DGC: the threshold of a random sample, trimmed to k", {"sample"}, 7);
}

}  // namespace ps
