#pragma once
// Platform-independent random numbers for the kernels. The standard fixes std::mt19937_64's output sequence but
// not the distributions', so the kernels draw their own uniforms from it. Stochastic rounding uses a counter-based
// generator instead (a hash of the seed and the element index), so its result does not depend on how the work is
// split over threads.
#include <cstddef>
#include <cstdint>
#include <random>

namespace ps::kernels {

// Steele, Lea & Flood's SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
inline uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 24-bit uniforms for elements [b, e) (b even) of the counter-based stream hseed (already mixed: splitmix64(seed)):
// one splitmix64 per pair of elements, bits 8..31 for the even one and bits 40..63 for the odd one. Used by
// stochastic rounding (Quantize.h) and QSGD (Qsgd.h). The same numbers on every CPU; where it has AVX2 they are
// computed four hashes at a time (Random.cpp).
void uniforms24(size_t b, size_t e, uint64_t hseed, uint32_t* u);

// Uniform integer in [0, bound), bound >= 1, without bias (Lemire's multiply-shift with rejection).
inline uint64_t uniformBelow(std::mt19937_64& g, uint64_t bound) {
  __extension__ typedef unsigned __int128 U128;
  U128 m = U128(g()) * bound;
  uint64_t low = uint64_t(m);
  if (low < bound) {
    const uint64_t floor = (0 - bound) % bound;  // 2^64 mod bound
    while (low < floor) {
      m = U128(g()) * bound;
      low = uint64_t(m);
    }
  }
  return uint64_t(m >> 64);
}

}  // namespace ps::kernels
