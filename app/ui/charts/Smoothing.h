#pragma once
// Smoothing for compare charts: the debiased exponential moving average TensorBoard uses.
//   s_t = w * s_{t-1} + (1 - w) * y_t, s_0 = 0;  shown value = s_t / (1 - w^t)
// weight w in [0, 1): 0 returns the input. NaN and inf inputs are skipped (the output keeps the last value).
#include <QPointF>

#include <vector>

namespace ps::ui {

std::vector<QPointF> smoothEma(const std::vector<QPointF>& points, double weight);

}  // namespace ps::ui
