#pragma once
// No compression: float32 values as they are, the baseline every ratio is measured against.
// This header is torch-free: the catalogue reads the entry's spec without the engine.
#include "engine/compress/CodecEntry.h"

namespace ps {

struct IdentityEntry {
  static MethodSpec spec() { return codecSpec("none", "none", "float32 values as they are", 1); }
  static std::unique_ptr<Codec> make(const CompressionOptions& options, const CodecContext& context);
};

}  // namespace ps
