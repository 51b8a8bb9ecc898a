#include "engine/data/Synthetic.h"

#include "engine/data/DataError.h"

#include <cmath>
#include <random>
#include <string>

namespace ps::data {

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 31;

// Portable random source: only mt19937_64's raw output is used.
class PortableRng {
 public:
  explicit PortableRng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n); n > 0. The modulo bias is below 2^-32 for n < 2^32.
  uint64_t below(uint64_t n) { return engine_() % n; }

  // Standard normal via Box-Muller; the second value of each pair is cached.
  double normal() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1], keeps log finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * 3.14159265358979323846 * u2;
    spare_ = r * std::sin(theta);
    hasSpare_ = true;
    return r * std::cos(theta);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool hasSpare_ = false;
};

void requireAtLeast(const char* what, const char* name, int value, int minimum) {
  if (value < minimum)
    throw DataError(std::string(what) + ": " + name + " must be at least " + std::to_string(minimum) + ", got " +
                    std::to_string(value));
}

void requireSize(const char* what, int64_t elements) {
  if (elements >= kMaxElements)
    throw DataError(std::string(what) + ": " + std::to_string(elements) +
                    " values requested, more than the 2^31-1 supported; use smaller sizes");
}

}  // namespace

SyntheticClassification makeClassification(int count, int features, int classes, uint64_t seed) {
  constexpr const char* kWhat = "makeClassification";
  requireAtLeast(kWhat, "count", count, 1);
  requireAtLeast(kWhat, "features", features, 1);
  requireAtLeast(kWhat, "classes", classes, 2);
  requireSize(kWhat, int64_t{count} * features);
  requireSize(kWhat, int64_t{classes} * features);

  constexpr double kCenterSpread = 3.0;  // std-dev of the class centres
  constexpr double kMinCenterDist = 3.0;
  constexpr double kNoise = 0.5;  // std-dev of the points around their centre
  constexpr int kCenterTries = 64;

  PortableRng rng(seed);
  const auto nf = static_cast<std::size_t>(features);
  const auto nc = static_cast<std::size_t>(classes);
  const auto n = static_cast<std::size_t>(count);

  // Class centres, redrawn (a bounded number of times) when too close to an earlier one.
  std::vector<double> centers(nc * nf);
  for (std::size_t c = 0; c < nc; ++c) {
    double* center = &centers[c * nf];
    for (int attempt = 0; attempt < kCenterTries; ++attempt) {
      for (std::size_t f = 0; f < nf; ++f) center[f] = kCenterSpread * rng.normal();
      bool farEnough = true;
      for (std::size_t o = 0; o < c && farEnough; ++o) {
        double d2 = 0.0;
        for (std::size_t f = 0; f < nf; ++f)
          d2 += (center[f] - centers[o * nf + f]) * (center[f] - centers[o * nf + f]);
        farEnough = d2 >= kMinCenterDist * kMinCenterDist;
      }
      if (farEnough) break;
    }
  }

  SyntheticClassification out;
  out.count = count;
  out.features = features;
  out.classes = classes;
  out.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.y[i] = static_cast<int32_t>(i % nc);
  for (std::size_t i = n - 1; i > 0; --i)  // Fisher-Yates
    std::swap(out.y[i], out.y[static_cast<std::size_t>(rng.below(i + 1))]);

  out.x.resize(n * nf);
  for (std::size_t i = 0; i < n; ++i) {
    const double* center = &centers[static_cast<std::size_t>(out.y[i]) * nf];
    for (std::size_t f = 0; f < nf; ++f) out.x[i * nf + f] = static_cast<float>(center[f] + kNoise * rng.normal());
  }
  return out;
}

std::vector<int32_t> makeTokens(int count, int length, int vocab, uint64_t seed) {
  constexpr const char* kWhat = "makeTokens";
  requireAtLeast(kWhat, "count", count, 1);
  requireAtLeast(kWhat, "length", length, 1);
  requireAtLeast(kWhat, "vocab", vocab, 2);
  requireSize(kWhat, int64_t{count} * length);

  constexpr std::size_t kMotifs = 8;
  constexpr uint64_t kMinMotifLength = 3;
  constexpr uint64_t kMaxMotifLength = 8;
  constexpr double kNoise = 0.05;

  PortableRng rng(seed);
  const auto v = static_cast<uint64_t>(vocab);
  std::vector<std::vector<int32_t>> motifs(kMotifs);
  for (auto& motif : motifs) {
    motif.resize(static_cast<std::size_t>(kMinMotifLength + rng.below(kMaxMotifLength - kMinMotifLength + 1)));
    for (int32_t& t : motif) t = static_cast<int32_t>(rng.below(v));
  }

  std::vector<int32_t> tokens;
  tokens.reserve(static_cast<std::size_t>(count) * static_cast<std::size_t>(length));
  for (int s = 0; s < count; ++s) {
    const auto& motif = motifs[static_cast<std::size_t>(rng.below(kMotifs))];
    const std::size_t period = motif.size();
    const auto phase = static_cast<std::size_t>(rng.below(period));
    for (int k = 0; k < length; ++k) {
      const bool noisy = rng.uniform() < kNoise;
      const int32_t clean = motif[(phase + static_cast<std::size_t>(k)) % period];
      tokens.push_back(noisy ? static_cast<int32_t>(rng.below(v)) : clean);
    }
  }
  return tokens;
}

}  // namespace ps::data
