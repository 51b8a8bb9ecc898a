#pragma once
// What the chart tests read from a rendered chart.
#include <QImage>
#include <QSet>

namespace ps::test {

// The number of distinct colours on every other pixel of every other row: an empty or one-colour chart has few.
inline int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  return colours.size();
}

}  // namespace ps::test
