#pragma once
// A block of float values on the wire: float32, fp16, or Q_b (1..8 bits) with one scale (max-abs) or one
// min and max (min-max) per group. Used by the quantizer and for the values of sparse payloads.
#include "engine/compress/ByteIo.h"

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace ps {

class TensorKernels;

struct ValueFormat {
  int bits = 32;              // 32 float32, 16 fp16, 1..8 quantized
  bool minmax = false;        // asymmetric min-max instead of symmetric max-abs
  bool stochastic = false;    // stochastic rounding (unbiased)
  uint64_t group = 512;       // values per scale group
};

// Appends the block for x[0..n) to `out`; `seed` drives stochastic rounding.
void encodeValues(const float* x, size_t n, const ValueFormat& f, uint64_t seed, ByteWriter& out);
// The same block for a tensor where it lives: on a GPU the group scales and the packing run there and only they come
// back. There the format must be one encodesWhereItLives() accepts. With `codes`, the packed codes (the block's last
// bytes) are left in *codes, a uint8 tensor where x is, instead of being written to `out` (also for one of those
// formats only).
void encodeValues(const TensorKernels& x, const ValueFormat& f, uint64_t seed, ByteWriter& out,
                  torch::Tensor* codes = nullptr);
// x (float32) as fp16 or bf16 where it is, with torch's rounding (to nearest even, as the CPU kernels) and finite
// values beyond the format saturated as kernels::saturateInfinities does: the same bits as the host path.
torch::Tensor halvesHere(const torch::Tensor& x, bool bf16);
// Formats encoded on a GPU: 1..8 bits, symmetric max-abs, nearest rounding (the CUDA twins' format).
bool encodesWhereItLives(const ValueFormat& f);
// Throws unless the block that starts at `in` can hold n values in the bytes left: decoders call it before they
// allocate the output a hostile header may size.
void requireValueBlock(const ByteReader& in, size_t n);
// A block of n values read and checked field by field; its values or packed codes still point into the payload.
struct ValueBlock {
  int bits = 32;
  bool minmax = false;
  size_t group = 1;
  std::vector<float> lo, hi;  // per group: the max-abs scales in lo; min-max's minimums and maximums
  const uint8_t* data = nullptr;
  size_t bytes = 0;  // of data: 4n, 2n or packedBytes(n, bits)
};
// With `codes` (a payload's tail) the packed codes are there, not in `in`: their size is checked, and `data` points at
// them when they are on the host, else it stays null (decoders read them on the device).
ValueBlock readValues(ByteReader& in, size_t n, const torch::Tensor* codes = nullptr);
// Decodes a block read for n values into `out` (host), refusing non-finite values and malformed codes.
void decodeValues(const ValueBlock& block, size_t n, float* out);
// Reads a block of exactly n values (validating every field) into `out`.
void decodeValues(ByteReader& in, size_t n, float* out);

// The variance bound omega of the block for scale groups of `group` values: the smallest omega with
// E|Q(x) - x|^2 <= omega |x|^2 for every x (the supremum over inputs, derived in docs/algorithms.md), from the
// codec's real steps (stretched scale, fp16 rounding of scales included): 0 for float32; for stochastic rounding of
// 1..8 bits, max-abs max_f (m f(1-f) + v) / (L^2 + m f^2) with L = h - 1 steps and m = group - 1 (about 10.8 at 2 bits
// and 512 values), 1 bit group - 1, min-max (group - 2) / (2 (2^b - 1)^2); -1 (biased) for nearest rounding and fp16.
double quantizerOmega(const ValueFormat& f, uint64_t group);

}  // namespace ps
