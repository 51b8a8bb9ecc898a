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
#include <string>
#include <vector>

namespace ps {

class Codec;
struct CodecContext;

// A codec's spec with its name, its label in the app, one line of help and its payload id.
inline MethodSpec codecSpec(std::string name, std::string label, std::string help, int payload) {
  MethodSpec m = methodSpec(std::move(name), std::move(label), std::move(help));
  m.payload = payload;
  return m;
}

// A sparsifier's spec: it reads K, its own options `extra`, and the options of the quantizer its values may pass
// through again (value_bits and those that shape it).
inline MethodSpec sparsifierSpec(std::string name, std::string label, std::string help,
                                 const std::vector<std::string>& extra, int payload) {
  MethodSpec m = codecSpec(std::move(name), std::move(label), std::move(help), payload);
  m.sparse = true;
  m.options = {"k"};
  m.options.insert(m.options.end(), extra.begin(), extra.end());
  for (const char* o : {"value_bits", "rounding", "range", "bucket"}) m.options.push_back(o);
  m.requantizing = {"rounding", "range", "bucket"};
  return m;
}

}  // namespace ps
