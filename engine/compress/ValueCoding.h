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
// Throws unless the block that starts at `in` can hold n values in the bytes left: decoders call it before they
// allocate the output a hostile header may size.
void requireValueBlock(const ByteReader& in, size_t n);
// Reads a block of exactly n values (validating every field) into `out`.
void decodeValues(ByteReader& in, size_t n, float* out);

// The variance bound omega of the block for scale groups of `group` values: 0 for float32; for stochastic rounding
// of 1..8 bits, group / (4 L^2) with L the quantization steps between 0 and the group's largest magnitude as the
// codec really scales it (stretched scale, fp16 rounding of scales included); -1 (biased) for nearest rounding and
// fp16.
double quantizerOmega(const ValueFormat& f, uint64_t group);

}  // namespace ps
