#pragma once
// Names that tell a set of runs apart wherever the compare view shows a run: legends, the run list, markers, the
// settings diff's headers and the time-to-target table. A run's stored name is often shared (every run of a claim
// suite starts with the suite's title), so the display name is built from what differs instead:
//
//   "#12 · topk ef · seed 2"        a suite run: id, then the variant and the seed where the shown runs differ in them
//   "#7 · fwd method topk · fwd k 5 %"   another run: id, then the settings that differ (at most three, then "+N")
//   "#3 Fashion-MNIST baseline"     nothing differs (or a single run): id and the stored name
//
// A seed group (runs that differ only in seed, drawn as one) goes by its first run's name without the seed.
//
// The id comes first, so two runs never read alike; long names are elided in the middle when drawn, never at the end.
#include "app/ui/runs/RunSeries.h"

#include <QString>

#include <map>
#include <vector>

namespace ps::ui {

struct RunNames {
  std::map<qint64, QString> runs, groups;  // by run id

  // The run's name, else "#<id> <stored name>" for a run the names were not made for.
  QString of(const RunSeries& run) const;
  // The name of the seed group `run` leads.
  QString groupOf(const RunSeries& run) const;
};

RunNames displayNames(const std::vector<const RunSeries*>& runs);

}  // namespace ps::ui
