#pragma once
// A block of float values on the wire: float32, fp16, or Q_b (1..8 bits) with one scale (max-abs) or one
// min and max (min-max) per group. Used by the quantizer and for the values of sparse payloads.
#include "engine/compress/ByteIo.h"

#include <cstdint>

namespace ps {

struct ValueFormat {
  int bits = 32;              // 32 float32, 16 fp16, 1..8 quantized
  bool minmax = false;        // asymmetric min-max instead of symmetric max-abs
  bool stochastic = false;    // stochastic rounding (unbiased)
  uint64_t group = 512;       // values per scale group
};

// Appends the block for x[0..n) to `out`; `seed` drives stochastic rounding.
void encodeValues(const float* x, size_t n, const ValueFormat& f, uint64_t seed, ByteWriter& out);
// Reads a block of exactly n values (validating every field) into `out`.
void decodeValues(ByteReader& in, size_t n, float* out);

}  // namespace ps
