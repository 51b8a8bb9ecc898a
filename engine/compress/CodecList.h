#pragma once
// The codecs of the lab, one line each. The catalogue (engine/compress/spec/Catalogue.h) reads their specs, torch-
// free; the engine's makeCodec builds them. A codec here is everywhere: config keys and their validation, the
// app's compressor editor, the codec CLI, the codec tests, the decoder fuzzer and bench_compress.
#include "engine/compress/BuiltinCodecs.h"
#include "engine/compress/PowerSgdCodec.h"

#include <string>
#include <vector>

namespace ps {

template <class... Entries>
struct CodecListOf {
  static std::vector<MethodSpec> specs() { return {Entries::spec()...}; }
  // Calls visit(Entry{}) for each entry until it returns true; says whether one did.
  template <class Visit>
  static bool any(Visit&& visit) {
    return (visit(Entries{}) || ...);
  }
};

using CodecList = CodecListOf<IdentityEntry, Fp16Entry, Bf16Entry, QuantizeEntry, QsgdEntry, SignEntry, TopKEntry,
                              RandKEntry, GaussianKEntry, SampledKEntry, PowerSgdEntry>;

}  // namespace ps
