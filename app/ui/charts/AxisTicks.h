#pragma once
// Axis helpers shared by the charts of this folder (not used outside it): "nice" tick positions, compact tick
// and value labels, and the outlier-robust autoscale range.
#include <QString>

#include <utility>
#include <vector>

namespace ps::ui::axis {

// The 1, 2 or 5 x 10^n step that splits `span` into about `targetTicks` intervals (1 for an empty span).
double niceStep(double span, int targetTicks);
// Multiples of niceStep(hi - lo, targetTicks) within [lo, hi]; the step is written to *step when given.
std::vector<double> linearTicks(double lo, double hi, int targetTicks, double* step = nullptr);
// Decade exponents (integers, in log10 space) within [log10Lo, log10Hi], every k-th decade so that there are about
// `targetTicks` at most. Empty when fewer than two decades are in range (the caller then uses linear ticks).
std::vector<double> decadeTicks(double log10Lo, double log10Hi, int targetTicks);

// Ticks of a log axis over [lo, hi] (values, lo > 0), spread over the whole range: decades when three or more are in
// view, else 1-2-5 of each decade, else every digit of each decade (0.3, 0.4, ...), the first of these with at least
// three ticks and at most 2 x `targetTicks`; otherwise the fullest of them; empty when none has two (the caller then
// uses linear ticks).
std::vector<double> logTicks(double lo, double hi, int targetTicks);

// A tick label that is as short as the tick step allows: 0.5, 1.2k, 3.4M, 1e-3, 2.5e-4.
QString formatTick(double value, double step);
// A value with about four significant digits, same compact style (crosshair, tooltips).
QString formatValue(double value);

// [lo, hi] of `values` (non-empty, finite; reordered in place): the plain min and max unless an extreme lies more
// than 1.5 quantile spans beyond the 1%..99% quantiles, in which case that side is clamped to the quantile widened
// by 10% of the span. No padding is added.
std::pair<double, double> robustRange(std::vector<double>& values);

}  // namespace ps::ui::axis
