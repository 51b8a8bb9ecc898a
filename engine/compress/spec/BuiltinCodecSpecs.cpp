// Catalogue entries of the codecs the lab started with (their factories are in engine/compress/CodecFactory.cpp).
#include "engine/compress/BuiltinCodecs.h"

namespace ps {
namespace {

// A sparsifier's values can be quantized again: these options then apply to them.
const std::vector<std::string> kValueOptions = {"value_bits", "rounding", "range", "bucket"};

MethodSpec codec(std::string name, std::string label, std::string help, int payload) {
  MethodSpec m;
  m.name = std::move(name);
  m.label = std::move(label);
  m.help = std::move(help);
  m.payload = payload;
  return m;
}

MethodSpec sparsifier(std::string name, std::string label, std::string help, std::vector<std::string> extra,
                      int payload) {
  MethodSpec m = codec(std::move(name), std::move(label), std::move(help), payload);
  m.sparse = true;
  m.options = {"k"};
  m.options.insert(m.options.end(), extra.begin(), extra.end());
  m.options.insert(m.options.end(), kValueOptions.begin(), kValueOptions.end());
  return m;
}

}  // namespace

MethodSpec IdentityEntry::spec() { return codec("none", "none", "float32 values as they are", 1); }
MethodSpec Fp16Entry::spec() {
  MethodSpec m = codec("fp16", "fp16", "IEEE half precision, 16 bits a value", 2);
  m.valueBits = 16;
  return m;
}
MethodSpec Bf16Entry::spec() {
  MethodSpec m = codec("bf16", "bf16", "bfloat16, 16 bits a value", 3);
  m.valueBits = 16;
  return m;
}
MethodSpec QuantizeEntry::spec() {
  MethodSpec m = codec("quantize", "Quantize",
                       "b-bit codes with a scale per tensor, channel or bucket (16 bits: an fp16 cast)", 4);
  m.options = {"bits", "rounding", "scale", "bucket", "range"};
  return m;
}
MethodSpec QsgdEntry::spec() {
  MethodSpec m = codec("qsgd", "QSGD", "s levels of the bucket's norm, stochastically rounded (unbiased)", 5);
  m.options = {"levels", "bucket"};
  return m;
}
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
