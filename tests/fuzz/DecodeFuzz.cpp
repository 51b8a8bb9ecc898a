// libFuzzer target for the payload decoders: whatever bytes arrive, a decoder returns a tensor or throws
// PayloadError; it never crashes or reads out of bounds (built with ASan + UBSan).
//   build/fuzz/fuzz_decode -max_total_time=60 tests/fuzz/corpus
#include "engine/compress/Codec.h"
#include "engine/compress/spec/Catalogue.h"

#include <torch/torch.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

std::vector<std::unique_ptr<ps::Codec>>& codecs() {
  static auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<ps::Codec>>();
    for (const auto& spec : ps::catalogue::codecs()) {  // every registered codec, at its defaults
      ps::CompressionOptions o;
      o.method = spec.name;
      v->push_back(ps::makeCodec(o));
    }
    return v;
  }();
  return *all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  auto& all = codecs();
  ps::Payload p;
  p.bytes.assign(data + 1, data + size);
  // Keep declared shapes small so the fuzzer explores parsing rather than legitimately allocating gigabytes
  // (a sparse payload of a few bytes may describe a huge, mostly zero tensor).
  size_t offset = 0;
  try {
    if (ps::PayloadHeader::read(p.bytes, offset).numel() > (int64_t(1) << 22)) return 0;
  } catch (const ps::PayloadError&) {
  }
  try {
    auto x = all[data[0] % all.size()]->decode(p, torch::kCPU);
    (void)x.sum().item<float>();
  } catch (const ps::PayloadError&) {
  }
  return 0;
}
