#pragma once
// A float's bit pattern as an unsigned integer and back, without aliasing: the kernels compare, mask and round floats
// as integers where that vectorises better or is exact.
#include <cstdint>
#include <cstring>

namespace ps::kernels {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace ps::kernels
