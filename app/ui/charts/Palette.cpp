#include "app/ui/charts/Palette.h"

#include <algorithm>

namespace ps::ui {

namespace {

// Tableau 10 (the classic order matplotlib calls tab10), then the same ten hues at 60% of their brightness, so that
// twenty runs or series stay apart; the first entry is SeriesStyle's default colour.
constexpr int kPalette[][3] = {
    {31, 119, 180},  {255, 127, 14}, {44, 160, 44},  {214, 39, 40}, {148, 103, 189}, {140, 86, 75},  {227, 119, 194},
    {127, 127, 127}, {188, 189, 34}, {23, 190, 207}, {19, 71, 108}, {153, 76, 8},    {26, 96, 26},   {128, 23, 24},
    {89, 62, 113},   {84, 52, 45},   {136, 71, 116}, {76, 76, 76},  {113, 113, 20},  {14, 114, 124},
};
constexpr int kPaletteSize = static_cast<int>(sizeof(kPalette) / sizeof(kPalette[0]));
constexpr int kFaintAlpha = 70;

}  // namespace

QColor paletteColor(int index) {
  // A negative index is a caller's slip; wrap it too rather than reading out of bounds.
  const int i = ((index % kPaletteSize) + kPaletteSize) % kPaletteSize;
  return QColor(kPalette[i][0], kPalette[i][1], kPalette[i][2]);
}

QColor runColor(int64_t runId) {
  // Run ids start at 1, so run 1 takes the first colour. Reduce before subtracting: runId - 1 would overflow for
  // INT64_MIN, and % keeps the sign of the dividend, hence the final wrap in paletteColor.
  const int64_t m = runId % kPaletteSize;  // in (-20, 20)
  return paletteColor(static_cast<int>(m) - 1);
}

QColor SeriesColours::of(const QString& name, const std::vector<const void*>& charts) {
  auto it = index_.find(name);
  if (it == index_.end()) {
    int free = 0;
    const auto taken = [&](int i) {
      return std::any_of(charts.begin(), charts.end(), [&](const void* c) { return used_[c].count(i) != 0; });
    };
    while (free < kPaletteSize && taken(free)) ++free;
    it = index_.emplace(name, free % kPaletteSize).first;
  }
  for (const void* c : charts) used_[c].insert(it->second);
  return paletteColor(it->second);
}

QColor faint(const QColor& colour) {
  QColor c = colour;
  c.setAlpha(kFaintAlpha);
  return c;
}

}  // namespace ps::ui
