#pragma once
// Slider positions for the compression controls. K moves on a logarithmic scale from 0.1% to 100% (equal slider
// travel per factor of ten, as users of TopK think in orders of magnitude); bits go 1..8 and then 16.
#include <cmath>

namespace ps::ui {

// Ten positions per decade at round values (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8), nearly evenly spaced in log K, so
// the slider lands on K = 5% or 30% exactly rather than on 5.01187%.
constexpr int kSliderSteps = 30;
constexpr double kMinK = 0.001;
constexpr double kMantissas[10] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8};

inline double kFromSlider(int position) {
  if (position <= 0) return kMinK;
  if (position >= kSliderSteps) return 1.0;
  const double decade = std::pow(10.0, double(position / 10)) * kMinK;
  return std::round(decade * kMantissas[position % 10] * 1e6) / 1e6;
}

// The position whose K is nearest to `k` in log scale (any K in (0, 1] maps somewhere).
inline int sliderFromK(double k) {
  if (!(k > kMinK)) return 0;
  if (k >= 1.0) return kSliderSteps;
  int best = 0;
  for (int p = 1; p <= kSliderSteps; ++p)
    if (std::abs(std::log(kFromSlider(p) / k)) < std::abs(std::log(kFromSlider(best) / k))) best = p;
  return best;
}

constexpr int kBitsPositions = 9;  // positions 1..8 are bits, 9 is 16 (an fp16 cast)
inline int bitsFromSlider(int position) { return position >= kBitsPositions ? 16 : (position < 1 ? 1 : position); }
inline int sliderFromBits(int bits) { return bits >= 16 ? kBitsPositions : (bits < 1 ? 1 : (bits > 8 ? 8 : bits)); }

}  // namespace ps::ui
