#pragma once
// What a codec registers: a type with its catalogue entry (torch-free, so the config schema and the app read it
// without the engine) and its factory (defined beside the codec, in the engine).
//
//   struct MyCodecEntry {
//     static MethodSpec spec();  // name, label, help, options (shared by name, or its own), sparse or not
//     static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
//   };
//
// and one line in engine/compress/CodecList.h. docs/adding-a-compressor.md walks through it.
#include "engine/compress/spec/Catalogue.h"
#include "engine/compress/spec/CompressionOptions.h"

#include <memory>

namespace ps {

class Codec;
struct CodecContext;

}  // namespace ps
