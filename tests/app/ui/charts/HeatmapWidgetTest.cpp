// HeatmapWidget: columns, ranges, the column cap and export (offscreen).
#include "app/ui/charts/HeatmapWidget.h"
#include "tests/app/ui/charts/ChartImages.h"

#include <QFileInfo>
#include <QImage>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using ps::ui::HeatmapWidget;

namespace {

using ps::test::distinctColours;

std::vector<float> bell(int n, double centre) {
  std::vector<float> counts(n);
  for (int i = 0; i < n; ++i) counts[i] = static_cast<float>(1000 * std::exp(-std::pow((i - centre) / 4.0, 2)));
  return counts;
}

}  // namespace

class HeatmapWidgetTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void columnsGrow() {
    HeatmapWidget w("grads");
    QCOMPARE(w.title(), QStringLiteral("grads"));
    QCOMPARE(w.columnCount(), 0);
    for (int s = 0; s < 10; ++s) {
      w.addHistogram(s, -1, 1, bell(32, 16));
      QCOMPARE(w.columnCount(), s + 1);
    }
    w.clear();
    QCOMPARE(w.columnCount(), 0);
  }

  void differingRangesAreAccepted() {
    HeatmapWidget w("grads");
    w.addHistogram(0, 0, 1, bell(16, 8));
    w.addHistogram(1, -5, 5, bell(64, 20));  // grows both sides
    w.addHistogram(2, 2, 3, bell(8, 4));     // inside the union
    w.addHistogram(3, 0.5, 0.5, {7});        // a point mass
    w.addHistogram(4, 1, -1, bell(16, 8));   // reversed bounds are swapped
    QCOMPARE(w.columnCount(), 5);
    QImage image(500, 300, QImage::Format_ARGB32);
    w.resize(500, 300);
    w.render(&image);
    QVERIFY(distinctColours(image) > 10);
  }

  void invalidHistogramsAreIgnored() {
    HeatmapWidget w("grads");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    w.addHistogram(0, nan, 1, bell(8, 4));
    w.addHistogram(0, 0, nan, bell(8, 4));
    w.addHistogram(0, -inf, 1, bell(8, 4));
    w.addHistogram(0, 0, 1, {});
    QCOMPARE(w.columnCount(), 0);
    w.addHistogram(1, 0, 1, {0, 0, 0});  // all zero: a column, drawn empty
    w.addHistogram(2, 0, 1, {1, std::numeric_limits<float>::quiet_NaN(), -3, 2});
    QCOMPARE(w.columnCount(), 2);
    QImage image(400, 300, QImage::Format_ARGB32);
    w.resize(400, 300);
    w.render(&image);
  }

  void columnCapHolds() {
    HeatmapWidget w("grads");
    int most = 0;
    for (int s = 0; s < 7000; ++s) {
      w.addHistogram(s, -1 - s * 1e-3, 1 + s * 1e-3, bell(32, 8 + (s % 16)));  // a slowly widening range
      most = std::max(most, w.columnCount());
    }
    QVERIFY(most <= 2000);
    QVERIFY(w.columnCount() >= 1000);
    QImage image(600, 300, QImage::Format_ARGB32);
    w.resize(600, 300);
    w.render(&image);
    QVERIFY(distinctColours(image) > 10);
  }

  // A colour scale says what the colours mean: right of both panels, running from the darkest colour at the
  // bottom (an empty bin) to the brightest at the top (the step's fullest bin).
  void aColourScaleExplainsTheColours() {
    HeatmapWidget w("stage 1 gradients");
    w.resize(480, 300);
    for (int s = 0; s < 30; ++s) w.addHistogram(s, -1, 1, bell(40, 10));
    const QRectF bar = w.colourScaleArea();
    QVERIFY(bar.width() >= 8 && bar.height() > 100);
    QVERIFY(QRectF(0, 0, 480, 300).contains(bar));
    QImage image(w.size(), QImage::Format_RGB32);
    w.render(&image);
    const QColor top = image.pixelColor(int(bar.center().x()), int(bar.top()) + 2);
    const QColor bottom = image.pixelColor(int(bar.center().x()), int(bar.bottom()) - 2);
    QVERIFY2(top.lightness() > bottom.lightness() + 80,
             qPrintable(QStringLiteral("%1 over %2").arg(top.name(), bottom.name())));
    // Nothing of the heatmap or the latest histogram is drawn over the scale.
    const auto luma = [](const QColor& c) { return 0.2126 * c.red() + 0.7152 * c.green() + 0.0722 * c.blue(); };
    for (int y = int(bar.top()) + 2; y + 7 < int(bar.bottom()) - 2; y += 7) {
      const QColor here = image.pixelColor(int(bar.center().x()), y);
      const QColor below = image.pixelColor(int(bar.center().x()), y + 7);
      QVERIFY2(luma(here) >= luma(below),
               qPrintable(QStringLiteral("%1 at %2 over %3").arg(here.name()).arg(y).arg(below.name())));
    }
  }

  void exportPng() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    HeatmapWidget w("stage 1 gradients");
    for (int s = 0; s < 50; ++s) w.addHistogram(s * 10, -0.1, 0.1, bell(40, 10 + s % 20));
    const QString path = dir.filePath("heat.png");
    QVERIFY(w.exportPng(path));
    QVERIFY(QFileInfo(path).size() > 0);
    const QImage image(path);
    QVERIFY(!image.isNull());
    QVERIFY(distinctColours(image) > 10);
    HeatmapWidget empty("none");
    QVERIFY(empty.exportPng(dir.filePath("empty.png")));
    QVERIFY(!w.exportPng(dir.filePath("no/such/dir/heat.png")));
  }
};

QTEST_MAIN(HeatmapWidgetTest)
#include "HeatmapWidgetTest.moc"
