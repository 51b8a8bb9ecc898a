#include "engine/compress/LowRank.h"

#include "engine/kernels/Random.h"

#include <cmath>

namespace ps::lowrank {

void orthonormalizeColumns(torch::Tensor& P) {
  torch::Tensor cols = P.t().contiguous();  // row i = column i
  const int64_t r = cols.size(0), n = cols.size(1);
  float* a = cols.data_ptr<float>();
  auto norm = [n](const float* c) {
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += double(c[k]) * c[k];
    return std::sqrt(s);
  };
  for (int64_t i = 0; i < r; ++i) {
    float* ci = a + i * n;
    const double before = norm(ci);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t j = 0; j < i; ++j) {
        const float* cj = a + j * n;
        double dot = 0;
        for (int64_t k = 0; k < n; ++k) dot += double(ci[k]) * cj[k];
        for (int64_t k = 0; k < n; ++k) ci[k] = float(ci[k] - dot * cj[k]);
      }
    const double after = norm(ci);
    const double scale = std::isfinite(after) && after > 1e-4 * before && after > 1e-30 ? 1.0 / after : 0.0;
    for (int64_t k = 0; k < n; ++k) ci[k] = float(ci[k] * scale);
  }
  P = cols.t().contiguous();
}

void drawNormalColumn(torch::Tensor& q, int64_t c, uint64_t key) {
  const int64_t m = q.size(0), r = q.size(1);
  float* data = q.data_ptr<float>();
  uint64_t state = kernels::splitmix64(key);
  for (int64_t i = 0; i < m; i += 2) {
    state = kernels::splitmix64(state);
    const double u1 = (double(state >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    state = kernels::splitmix64(state);
    const double u2 = double(state >> 11) * 0x1.0p-53;
    const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * M_PI * u2;
    data[i * r + c] = float(radius * std::cos(angle));
    if (i + 1 < m) data[(i + 1) * r + c] = float(radius * std::sin(angle));
  }
}

}  // namespace ps::lowrank
