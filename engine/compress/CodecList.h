#pragma once
// The codecs of the lab, one line each. The catalogue (engine/compress/spec/Catalogue.h) reads their specs, torch-
// free; the engine's makeCodec builds them. A codec here is everywhere: config keys and their validation, the
// app's compressor editor, the codec CLI, the codec tests, the decoder fuzzer and bench_compress.
#include "engine/compress/BuiltinCodecs.h"
#include "engine/compress/PowerSgdCodec.h"
#include "engine/compress/SignCodec.h"
#include "engine/compress/spec/EntryList.h"

namespace ps {

using CodecList = EntryList<IdentityEntry, Fp16Entry, Bf16Entry, QuantizeEntry, QsgdEntry, SignEntry, TopKEntry,
                              RandKEntry, GaussianKEntry, SampledKEntry, PowerSgdEntry>;

}  // namespace ps
