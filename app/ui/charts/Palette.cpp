#include "app/ui/charts/Palette.h"

namespace ps::ui {

namespace {

// Tableau 10 (the classic order matplotlib calls tab10); the first entry is SeriesStyle's default colour.
constexpr int kPalette[][3] = {
    {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
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
  const int64_t m = runId % kPaletteSize;  // in (-10, 10)
  return paletteColor(static_cast<int>(m) - 1);
}

QColor faint(const QColor& colour) {
  QColor c = colour;
  c.setAlpha(kFaintAlpha);
  return c;
}

}  // namespace ps::ui
