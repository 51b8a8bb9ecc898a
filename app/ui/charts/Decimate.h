#pragma once
// Decimation for drawing: keeps, per pixel column of the x range [x0, x1], the first, lowest, highest and last
// point (in x order), so a line drawn through the result covers the same pixels as the full series. Points outside
// the range are dropped except one neighbour on each side, so lines run to the edges. Input sorted by x.
#include <QPointF>

#include <vector>

namespace ps::ui {

std::vector<QPointF> decimate(const std::vector<QPointF>& points, double x0, double x1, int columns);

}  // namespace ps::ui
