#pragma once
// The codecs of the lab, one line each; each entry lives with its codec in one file pair (engine/compress/
// <Name>Codec.h and .cpp). The catalogue (engine/compress/spec/Catalogue.h) reads their specs, torch-free; the
// engine's makeCodec builds them. A codec here is everywhere: config keys and their validation, the
// app's compressor editor, the codec CLI, the codec tests, the decoder fuzzer and bench_compress.
#include "engine/compress/BottleneckCodec.h"
#include "engine/compress/HalfCodec.h"
#include "engine/compress/IdentityCodec.h"
#include "engine/compress/PowerSgdCodec.h"
#include "engine/compress/QsgdCodec.h"
#include "engine/compress/QuantizeCodec.h"
#include "engine/compress/SignCodec.h"
#include "engine/compress/SparseCodec.h"
#include "engine/compress/spec/EntryList.h"

namespace ps {

using CodecList = EntryList<IdentityEntry, Fp16Entry, Bf16Entry, QuantizeEntry, QsgdEntry, SignEntry, TopKEntry,
                            RandKEntry, GaussianKEntry, SampledKEntry, PowerSgdEntry, BottleneckEntry>;

}  // namespace ps
