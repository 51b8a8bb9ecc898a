#include "engine/kernels/BitPack.h"

#include "engine/kernels/KernelError.h"

#include <array>
#include <cstring>
#include <string>

// The 2-, 4- and 8-byte word tricks below read codes with memcpy and assume a little-endian host (x86, ARM, CUDA).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "BitPack assumes a little-endian host");

namespace ps::kernels {

namespace {

// Little-endian loads and stores of n <= 8 bytes.
inline uint64_t loadLE(const uint8_t* p, size_t n) {
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= uint64_t(p[i]) << (8 * i);
  return w;
}
inline void storeLE(uint8_t* p, uint64_t w, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t(w >> (8 * i));
}

// Codes [0, r) of a partial block (r < 8), generic for every width.
void packTail(const uint8_t* c, size_t r, int b, uint8_t* out) {
  uint64_t acc = 0;
  for (size_t t = 0; t < r; ++t) acc |= uint64_t(c[t] & ((1u << b) - 1)) << (t * size_t(b));
  storeLE(out, acc, (r * size_t(b) + 7) / 8);
}
void unpackTail(const uint8_t* in, size_t r, int b, uint8_t* c) {
  const uint64_t acc = loadLE(in, (r * size_t(b) + 7) / 8);
  for (size_t t = 0; t < r; ++t) c[t] = uint8_t((acc >> (t * size_t(b))) & ((1u << b) - 1));
}

template <int B>
void packBlocks(const uint8_t* c, size_t blocks, uint8_t* out) {
  if constexpr (B == 4) {  // two codes per byte: (c0 | c1 << 8) | that >> 4 has c0 | c1 << 4 in its low byte
    for (size_t j = 0; j < blocks * 4; ++j) {
      uint16_t w;
      std::memcpy(&w, c + 2 * j, 2);
      w &= 0x0f0f;
      out[j] = uint8_t(w | (w >> 4));
    }
  } else if constexpr (B == 2) {  // four codes per byte
    for (size_t j = 0; j < blocks * 2; ++j) {
      uint32_t w;
      std::memcpy(&w, c + 4 * j, 4);
      w &= 0x03030303u;
      w |= w >> 6;   // c0 | c1 << 2 in bits 0..3, c2 | c3 << 2 in bits 16..19
      w |= w >> 12;  // ... the latter moved to bits 4..7
      out[j] = uint8_t(w);
    }
  } else if constexpr (B == 1) {  // eight codes per byte: one multiply gathers bit 0 of every byte into the top byte
    for (size_t j = 0; j < blocks; ++j) {
      uint64_t w;
      std::memcpy(&w, c + 8 * j, 8);
      out[j] = uint8_t(((w & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
    }
  } else {
    constexpr uint64_t mask = (1u << B) - 1;
    for (size_t j = 0; j < blocks; ++j) {
      uint64_t acc = 0;
      for (int t = 0; t < 8; ++t) acc |= (c[8 * j + size_t(t)] & mask) << (t * B);
      storeLE(out + j * B, acc, B);
    }
  }
}

// Byte -> its 8 bits as 8 bytes of 0/1 (little-endian), for 1-bit unpacking.
constexpr std::array<uint64_t, 256> makeSpread() {
  std::array<uint64_t, 256> t{};
  for (int v = 0; v < 256; ++v)
    for (int b = 0; b < 8; ++b)
      if (v >> b & 1) t[size_t(v)] |= uint64_t(1) << (8 * b);
  return t;
}
constexpr std::array<uint64_t, 256> kSpread = makeSpread();

template <int B>
void unpackBlocks(const uint8_t* in, size_t blocks, uint8_t* c) {
  if constexpr (B == 4) {
    for (size_t j = 0; j < blocks * 4; ++j) {
      const uint16_t w = uint16_t((in[j] & 0x0fu) | (uint16_t(in[j] >> 4) << 8));
      std::memcpy(c + 2 * j, &w, 2);
    }
  } else if constexpr (B == 2) {
    for (size_t j = 0; j < blocks * 2; ++j) {
      const uint32_t v = in[j];
      const uint32_t w = (v & 3u) | ((v >> 2) & 3u) << 8 | ((v >> 4) & 3u) << 16 | (v >> 6) << 24;
      std::memcpy(c + 4 * j, &w, 4);
    }
  } else if constexpr (B == 1) {
    for (size_t j = 0; j < blocks; ++j) std::memcpy(c + 8 * j, &kSpread[in[j]], 8);
  } else {
    constexpr uint64_t mask = (1u << B) - 1;
    for (size_t j = 0; j < blocks; ++j) {
      const uint64_t acc = loadLE(in + j * B, B);
      for (int t = 0; t < 8; ++t) c[8 * j + size_t(t)] = uint8_t((acc >> (t * B)) & mask);
    }
  }
}

template <int B>
void packAll(const uint8_t* codes, size_t count, uint8_t* out) {
  const size_t blocks = count / 8;
  if constexpr (B == 8) std::memcpy(out, codes, count);
  else packBlocks<B>(codes, blocks, out);
  if (B != 8 && count % 8) packTail(codes + blocks * 8, count % 8, B, out + blocks * B);
}

template <int B>
void unpackAll(const uint8_t* in, size_t count, uint8_t* codes) {
  const size_t blocks = count / 8;
  if constexpr (B == 8) std::memcpy(codes, in, count);
  else unpackBlocks<B>(in, blocks, codes);
  if (B != 8 && count % 8) unpackTail(in + blocks * B, count % 8, B, codes + blocks * 8);
}

}  // namespace

size_t packedBytes(size_t count, int bits) {
  require(bits >= 1 && bits <= 8, "packedBytes: bits must be in 1..8");
  require(count <= (SIZE_MAX - 7) / 8, "packedBytes: count too large");
  return (count * size_t(bits) + 7) / 8;
}

size_t checkPackedCodes(const uint8_t* in, size_t inBytes, size_t count, int bits, const char* who) {
  const size_t bytes = packedBytes(count, bits), usedBits = (count * size_t(bits)) % 8;
  if (inBytes < bytes) throw KernelError(std::string(who) + ": truncated codes");
  if (usedBits && (in[bytes - 1] >> usedBits)) throw KernelError(std::string(who) + ": padding bits are not 0");
  return bytes;
}

void packCodes(const uint8_t* codes, size_t count, int bits, uint8_t* out) {
  packedBytes(count, bits);  // validates
  if (count == 0) return;
  switch (bits) {
    case 1: return packAll<1>(codes, count, out);
    case 2: return packAll<2>(codes, count, out);
    case 3: return packAll<3>(codes, count, out);
    case 4: return packAll<4>(codes, count, out);
    case 5: return packAll<5>(codes, count, out);
    case 6: return packAll<6>(codes, count, out);
    case 7: return packAll<7>(codes, count, out);
    default: return packAll<8>(codes, count, out);
  }
}

void unpackCodes(const uint8_t* in, size_t count, int bits, uint8_t* codes) {
  packedBytes(count, bits);
  if (count == 0) return;
  switch (bits) {
    case 1: return unpackAll<1>(in, count, codes);
    case 2: return unpackAll<2>(in, count, codes);
    case 3: return unpackAll<3>(in, count, codes);
    case 4: return unpackAll<4>(in, count, codes);
    case 5: return unpackAll<5>(in, count, codes);
    case 6: return unpackAll<6>(in, count, codes);
    case 7: return unpackAll<7>(in, count, codes);
    default: return unpackAll<8>(in, count, codes);
  }
}

}  // namespace ps::kernels
