#pragma once
// Bit-packing of b-bit codes (b in 1..8), LSB first: code i occupies bits [i*b, i*b + b) of the stream, and stream
// bit j is bit j%8 of byte j/8. Eight codes always fill exactly b bytes, so the loops work on blocks of 8 codes with
// a specialised loop for 8, 4, 2 and 1 bits and one for the others (3, 5, 6, 7).
#include <cstddef>
#include <cstdint>

namespace ps::kernels {

// ceil(count * bits / 8); throws KernelError unless 1 <= bits <= 8 (and on size_t overflow).
size_t packedBytes(size_t count, int bits);

// Writes exactly packedBytes(count, bits) bytes; bits of a code above `bits` are ignored; unused bits of the last
// byte are written as 0.
void packCodes(const uint8_t* codes, size_t count, int bits, uint8_t* out);

// Checks untrusted packed codes before they are unpacked: at least packedBytes(count, bits) bytes (inBytes may be
// larger; the rest is not read) and the unused bits of the last byte 0. Throws KernelError("<who>: ...") otherwise;
// returns packedBytes(count, bits). `in` is read only when count > 0.
size_t checkPackedCodes(const uint8_t* in, size_t inBytes, size_t count, int bits, const char* who);

// Reads exactly packedBytes(count, bits) bytes and writes `count` codes, each < 2^bits.
void unpackCodes(const uint8_t* in, size_t count, int bits, uint8_t* codes);

}  // namespace ps::kernels
