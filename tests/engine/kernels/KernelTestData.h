#pragma once
// Test data shared by the kernel tests.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ps::kernels {

// n draws of N(mean, sd) from a seeded std::mt19937_64 (same libstdc++ sequence in every test binary).
inline std::vector<float> normalData(size_t n, uint64_t seed, float mean = 0.f, float sd = 1.f) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> x(n);
  for (auto& v : x) v = d(g);
  return x;
}

}  // namespace ps::kernels
