#pragma once
// Stable colours: a run keeps its colour in every chart and every session (chosen from its id), and series within
// one chart (links, stages) take successive colours of the same qualitative palette (Tableau 10, then its hues
// darker: twenty colours).
#include <QColor>
#include <QString>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace ps::ui {

QColor paletteColor(int index);          // index >= 0, wraps around the palette
QColor runColor(int64_t runId);          // the same colour for a run everywhere
QColor faint(const QColor& colour);      // the translucent version used behind a smoothed line

// Colours for named series over a set of charts: a name keeps its colour in every chart ("train" in the loss and in
// the accuracy chart), and a new name takes the first palette colour that no series of the charts it goes into has,
// so the series of one chart differ (names that never share a chart may share a colour: twenty is not a limit).
class SeriesColours {
 public:
  QColor of(const QString& name, const std::vector<const void*>& charts);
  void clear() {
    index_.clear();
    used_.clear();
  }

 private:
  std::map<QString, int> index_;
  std::map<const void*, std::set<int>> used_;  // chart -> palette indices of its series
};

}  // namespace ps::ui
