#pragma once
// Sparse index sets on the wire: the cheapest of three encodings, chosen per message.
//
//   [format byte][payload]
//   Absolute32  (0): k little-endian uint32 indices                                  -> 4k bytes
//   DeltaVarint (1): the gaps idx[j] - idx[j-1] (idx[-1] = -1, so every gap >= 1) as unsigned LEB128
//                    (7 bits a byte, low group first, high bit = more follows; minimal length, at most 5 bytes)
//   Bitmap      (2): n bits, bit i (byte i/8, bit i%8, LSB first) set iff i is an index; unused bits are 0
//
// Ties in size go to the format that decodes fastest: Absolute32, then Bitmap, then DeltaVarint. The decoder reads
// untrusted bytes and checks everything (see decodeIndices); n is limited to kMaxElements (2^32 - 1) so every index
// and every gap fits 32 bits.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ps::kernels {

enum class IndexFormat : uint8_t { Absolute32 = 0, DeltaVarint = 1, Bitmap = 2 };

// Index coding pays from fewer elements than streaming kernels: two threads from 2^16 indices.
inline constexpr size_t kIndicesPerThread = size_t(1) << 15;

// The cheapest format for k indices of n elements whose gaps take `varint` bytes as LEB128, and its payload's size
// (format byte excluded) in *payload: the rule every encoder follows, on the host or on a device.
IndexFormat cheapest(size_t k, size_t n, size_t varint, size_t* payload);

// Size in bytes (format byte included) of the cheapest encoding of idx[0..k) and, in *best, which one it is.
// Throws KernelError unless the indices are strictly ascending and < n (k <= n <= kMaxElements).
size_t encodedIndexBytes(const uint32_t* idx, size_t k, size_t n, IndexFormat* best = nullptr);

// Appends [format byte][payload] of the cheapest encoding to `out`; returns the bytes appended. Same checks.
size_t encodeIndices(const uint32_t* idx, size_t k, size_t n, std::vector<uint8_t>& out);

// Same, with the format forced (tests, and callers that want a fixed format).
size_t encodeIndicesAs(IndexFormat format, const uint32_t* idx, size_t k, size_t n, std::vector<uint8_t>& out);

// Decodes exactly k indices for a tensor of n elements from [data, data + size) into idx[0..k). The bytes must be
// exactly one encoding: a valid format byte; the payload length the format implies (4k, n/8 rounded up, or the
// varints' length) equal to size - 1 (so truncated data and trailing bytes are errors); indices strictly ascending
// and < n; varints minimal, at most 5 bytes and below 2^32; bitmap padding bits 0 and popcount == k. Throws
// KernelError on any violation (also k > n or n > kMaxElements), never reading outside the range or writing more
// than k indices. Returns the bytes consumed (== size).
size_t decodeIndices(const uint8_t* data, size_t size, size_t k, size_t n, uint32_t* idx);

// The positions of the set bits among the first n bits of `bits` (LSB first), ascending, into out (room for
// popcount); bits at n and beyond are ignored. Returns the count. A 64-bit word at a time.
size_t setBitPositions(const uint8_t* bits, size_t n, uint32_t* out);

// Writes the dense tensor of a sparse message in one pass over out[0..n): values[j] at idx[j], zeros in between.
// The indices must be strictly ascending and < n (decodeIndices guarantees both); threads split the output range
// (and with it the indices, found by binary search), so the whole write is one streaming pass, not a memset plus a
// scatter. Throws KernelError when the indices are not ascending or out of range (nothing is left half-checked:
// the check runs before anything is written).
void scatterSorted(const uint32_t* idx, const float* values, size_t k, float* out, size_t n, int threads = 0);

}  // namespace ps::kernels
