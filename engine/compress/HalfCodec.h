#pragma once
// Half-precision casts: IEEE fp16 and bfloat16, 16 bits a value (values beyond the format's range saturate).
// This header is torch-free: the catalogue reads the entries' specs without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct Fp16Entry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("fp16", "fp16", "IEEE half precision, 16 bits a value", 2);
    m.valueBits = 16;
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

struct Bf16Entry {
  static MethodSpec spec() {
    MethodSpec m = codecSpec("bf16", "bf16", "bfloat16, 16 bits a value", 3);
    m.valueBits = 16;
    return m;
  }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
