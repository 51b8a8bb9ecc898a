#pragma once
// The entries of the codecs the lab started with (engine/compress/CodecEntry.h): specs in
// engine/compress/spec/BuiltinCodecSpecs.cpp, factories in engine/compress/CodecFactory.cpp.
#include "engine/compress/CodecEntry.h"

namespace ps {

#define PS_BUILTIN_CODEC_ENTRY(Type)                                                               \
  struct Type {                                                                                    \
    static MethodSpec spec();                                                                      \
    static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context); \
  }

PS_BUILTIN_CODEC_ENTRY(IdentityEntry);
PS_BUILTIN_CODEC_ENTRY(Fp16Entry);
PS_BUILTIN_CODEC_ENTRY(Bf16Entry);
PS_BUILTIN_CODEC_ENTRY(QuantizeEntry);
PS_BUILTIN_CODEC_ENTRY(QsgdEntry);
PS_BUILTIN_CODEC_ENTRY(TopKEntry);
PS_BUILTIN_CODEC_ENTRY(RandKEntry);
PS_BUILTIN_CODEC_ENTRY(GaussianKEntry);
PS_BUILTIN_CODEC_ENTRY(SampledKEntry);

#undef PS_BUILTIN_CODEC_ENTRY

}  // namespace ps
