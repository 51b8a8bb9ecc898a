#pragma once
// Runs that differ only in their seed, drawn as one: the mean line of the group and its min–max band, where every
// run of the group has data. Plain functions of RunSeries and points, no widgets.
#include "app/ui/runs/RunSeries.h"

#include <QPointF>

#include <vector>

namespace ps::ui {

// The runs grouped by their configuration without train.seed (and without the run's name, tags, notes and
// checkpoint settings, which do not change training), in the order of each group's first run.
std::vector<std::vector<const RunSeries*>> seedGroups(const std::vector<const RunSeries*>& runs);

struct SeedBand {
  std::vector<QPointF> mean, lo, hi;  // on the same x values
};

// The mean, minimum and maximum of `lines` (each sorted by x) at every x where one of them has a point, inside the
// range that all of them cover; each line is read there by linear interpolation between its own points. Empty when
// the lines share no range or a line is empty.
SeedBand seedBand(const std::vector<std::vector<QPointF>>& lines);

}  // namespace ps::ui
