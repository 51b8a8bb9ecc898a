// libFuzzer target for the payload decoders, as receivers call them: with the shape the receiver expects. Whatever
// bytes arrive, a decoder returns a tensor of that shape or throws PayloadError; it never crashes, reads out of
// bounds or allocates for a size only the payload declares. There is no element cap here: memory is bounded by the
// sanitizer's allocation limit (-malloc_limit_mb), so an allocation sized by a hostile header is a finding.
//   input: codec selector (1 byte) | ndim (1 byte, 0..3) | ndim x u16 dimensions | payload
//   build/fuzz/fuzz_decode -max_total_time=60 -malloc_limit_mb=512 tests/fuzz/corpus/decode
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
  if (size < 2) return 0;
  auto& all = codecs();
  auto& codec = *all[data[0] % all.size()];
  const size_t ndim = data[1] % 4;
  if (size < 2 + 2 * ndim) return 0;
  std::vector<int64_t> expected;
  for (size_t i = 0; i < ndim; ++i) {
    uint16_t d = 0;
    std::memcpy(&d, data + 2 + 2 * i, 2);
    expected.push_back(int64_t(d) + 1);
  }
  ps::Payload p;
  p.bytes.assign(data + 2 + 2 * ndim, data + size);
  try {
    auto x = codec.decode(p, torch::kCPU, &expected);
    if (x.sizes().vec() != expected) __builtin_trap();  // the shape the receiver expects, or an error
    (void)x.sum().item<float>();
  } catch (const ps::PayloadError&) {
  }
  return 0;
}
