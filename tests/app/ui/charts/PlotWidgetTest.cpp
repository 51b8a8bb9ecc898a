// PlotWidget: the data model, autoscale, export and the zoom interaction (offscreen).
#include "app/ui/charts/ExportSettings.h"
#include "app/ui/charts/Palette.h"
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/charts/PlotWidgetImpl.h"
#include "tests/app/ui/charts/ChartImages.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>

#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <set>
#include <tuple>

#include <cmath>
#include <random>

using ps::ui::ChartFormat;
using ps::ui::Marker;
using ps::ui::PlotWidget;
using ps::ui::SeriesStyle;

namespace {

using ps::test::distinctColours;

std::vector<QPointF> ramp(int n, double slope = 1.0) {
  std::vector<QPointF> pts;
  for (int i = 0; i < n; ++i) pts.emplace_back(i, i * slope);
  return pts;
}

}  // namespace

class PlotWidgetTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void seriesAddReplaceAppendRemove() {
    PlotWidget w(QStringLiteral("Loss"));
    QCOMPARE(w.title(), QStringLiteral("Loss"));
    QCOMPARE(w.seriesCount(), 0);
    w.setSeries("a", "train", ramp(3), SeriesStyle{});
    w.setSeries("b", "eval", ramp(2), SeriesStyle{});
    QCOMPARE(w.seriesCount(), 2);
    QCOMPARE(w.pointCount(), 5);
    w.setSeries("a", "train", {{0, 1}}, SeriesStyle{});  // replaces
    QCOMPARE(w.seriesCount(), 2);
    QCOMPARE(w.pointCount("a"), 1);
    w.appendPoint("a", {1, 2});
    QCOMPARE(w.pointCount("a"), 2);
    QCOMPARE(w.points("a").back(), QPointF(1, 2));
    w.appendPoint("c", {0, 5});  // created on first append
    QVERIFY(w.hasSeries("c"));
    QCOMPARE(w.seriesCount(), 3);
    QCOMPARE(w.pointCount(), 5);
    w.removeSeries("b");
    QVERIFY(!w.hasSeries("b"));
    QCOMPARE(w.seriesCount(), 2);
    QCOMPARE(w.pointCount("b"), 0);
    QVERIFY(w.points("b").empty());
    w.appendPoint("a", {2, 3});  // the index survives the removal before it
    QCOMPARE(w.pointCount("a"), 3);
    w.removeSeries("nope");  // no-op
    QCOMPARE(w.seriesCount(), 2);
    w.clear();
    QCOMPARE(w.seriesCount(), 0);
    QCOMPARE(w.pointCount(), 0);
  }

  void outOfOrderAppendsAreSorted() {
    PlotWidget w("t");
    for (double x : {0.0, 3.0, 1.0, 2.0}) w.appendPoint("s", {x, x * 10});
    const std::vector<QPointF> pts = w.points("s");
    QCOMPARE(pts.size(), std::size_t(4));
    for (std::size_t i = 1; i < pts.size(); ++i) QVERIFY(pts[i - 1].x() <= pts[i].x());
  }

  void markers() {
    PlotWidget w("t");
    w.addMarker({10, "K = 1%"});
    w.addMarker({20, "bits = 4"});
    QCOMPARE(w.markers().size(), std::size_t(2));
    QCOMPARE(w.markers()[1].label, QStringLiteral("bits = 4"));
    w.setMarkers({Marker{5, "only"}});
    QCOMPARE(w.markers().size(), std::size_t(1));
    QCOMPARE(w.markers()[0].x, 5.0);
    w.clear();
    QVERIFY(w.markers().empty());
  }

  void xRangeDoesNotEmit() {
    PlotWidget w("t");
    w.setSeries("s", "s", ramp(100), SeriesStyle{});
    QSignalSpy spy(&w, &PlotWidget::xRangeChanged);
    QVERIFY(!w.xRange());
    w.setXRange(std::make_pair(10.0, 20.0));
    QVERIFY(w.xRange());
    QCOMPARE(w.xRange()->first, 10.0);
    QCOMPARE(w.xRange()->second, 20.0);
    // The y range follows the visible data only: y = x on [10, 20], plus padding and the edge neighbours.
    const auto [lo, hi] = w.visibleYRange();
    QVERIFY(lo > 5 && lo < 10);
    QVERIFY(hi > 20 && hi < 25);
    w.setXRange(std::make_pair(30.0, 25.0));  // reversed: swapped
    QCOMPARE(w.xRange()->first, 25.0);
    w.setXRange(std::nullopt);
    QVERIFY(!w.xRange());
    QCOMPARE(spy.count(), 0);
  }

  void logYClampsZeros() {
    PlotWidget w("t");
    w.setSeries("s", "s", {{0, 0}, {1, 0.5}, {2, 1}, {3, 0}, {4, -2}, {5, 10}}, SeriesStyle{});
    w.setLogY(true);
    QVERIFY(w.logY());
    const auto [lo, hi] = w.visibleYRange();
    QVERIFY(lo > 0);
    QVERIFY(hi >= 10);
    QVERIFY(lo <= 0.05);  // zeros sit at the smallest positive value / 10
    QImage image(600, 400, QImage::Format_ARGB32);
    w.resize(600, 400);
    w.render(&image);
    // All zeros: nothing positive to go by, still a positive range.
    w.setSeries("s", "s", {{0, 0}, {1, 0}}, SeriesStyle{});
    QVERIFY(w.visibleYRange().first > 0);
    QVERIFY(w.visibleYRange().first < w.visibleYRange().second);
    w.render(&image);
  }

  void autoscaleIgnoresALoneSpike() {
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(1.0, 0.05);
    std::vector<QPointF> pts{{0, 1e6}};  // the initial loss spike
    for (int i = 1; i <= 1000; ++i) pts.emplace_back(i, noise(rng));
    PlotWidget w("t");
    w.setSeries("loss", "loss", pts, SeriesStyle{});
    const auto [lo, hi] = w.visibleYRange();
    QVERIFY2(hi < 10, qPrintable(QString::number(hi)));
    QVERIFY(lo > 0.5 && lo < 1.0);
    // Without an outlier the whole data stays in view.
    w.setSeries("loss", "loss", ramp(1000, 0.1), SeriesStyle{});
    const auto [lo2, hi2] = w.visibleYRange();
    QVERIFY(lo2 <= 0 && hi2 >= 99.9);
  }

  // Two evaluation points among 600 training points are not outliers: every point of a sparse series is in range.
  // A dense series' spike is left off the scale and marked at the edge, unless outliers are not ignored.
  void autoscaleKeepsSparseSeriesAndMarksWhatItLeavesOut() {
    std::mt19937 rng(2);
    std::normal_distribution<double> noise(1.5, 0.3);
    std::vector<QPointF> train;
    for (int i = 1; i <= 600; ++i) train.emplace_back(i, noise(rng));
    PlotWidget w("t");
    w.resize(640, 400);
    w.setSeries("train", "train", train, SeriesStyle{});
    w.setSeries("uncompressed", "uncompressed", {{300, 7.8}, {600, 7.6}}, SeriesStyle{QColor(Qt::red)});
    auto [lo, hi] = w.visibleYRange();
    QVERIFY2(hi >= 7.8, qPrintable(QString::number(hi)));
    QCOMPARE(w.offScaleMarks(), 0);
    QVERIFY(w.ignoreOutliers());

    train[100].setY(1e4);  // a spike in the dense series
    w.setSeries("train", "train", train, SeriesStyle{});
    std::tie(lo, hi) = w.visibleYRange();
    QVERIFY2(hi >= 7.8 && hi < 100, qPrintable(QString::number(hi)));
    QCOMPARE(w.offScaleMarks(), 1);  // the spike, at the top edge
    QVERIFY(!w.grab().isNull());

    w.setIgnoreOutliers(false);
    std::tie(lo, hi) = w.visibleYRange();
    QVERIFY(hi >= 1e4);
    QCOMPARE(w.offScaleMarks(), 0);
  }

  void constantAndEmptyData() {
    PlotWidget w("t");
    auto [lo, hi] = w.visibleYRange();
    QVERIFY(lo < hi);
    w.setSeries("s", "s", {{0, 3}, {1, 3}, {2, 3}}, SeriesStyle{});
    std::tie(lo, hi) = w.visibleYRange();
    QVERIFY(lo < 3 && hi > 3);
    w.setSeries("s", "s", {{5, 0}}, SeriesStyle{});  // one point at zero
    std::tie(lo, hi) = w.visibleYRange();
    QVERIFY(lo < 0 && hi > 0);
  }

  void aNearlyFlatSeriesIsDrawnFlatNotAsNoise() {
    // Uncompressed bytes per step: 3.2 MB, differing by a header of a few bytes between steps.
    std::vector<QPointF> pts;
    for (int i = 0; i < 200; ++i) pts.emplace_back(i, 3.2e6 + (i % 3) * 24.0);
    PlotWidget w("t");
    w.setSeries("raw", "raw", pts, SeriesStyle{});
    auto [lo, hi] = w.visibleYRange();
    QVERIFY2(hi - lo >= 0.01 * 3.2e6 * 0.999, qPrintable(QStringLiteral("%1 .. %2").arg(lo).arg(hi)));
    QVERIFY(lo < 3.2e6 && hi > 3.2e6 + 48);  // centred on the data, all of it in view
    // A series that really moves keeps its own range.
    w.setSeries("raw", "raw", {{0, 0.90}, {1, 0.91}, {2, 0.92}}, SeriesStyle{});
    std::tie(lo, hi) = w.visibleYRange();
    QVERIFY2(hi - lo < 0.05, qPrintable(QStringLiteral("%1 .. %2").arg(lo).arg(hi)));
  }

  void exportPngWritesAChart() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    PlotWidget w("Loss");
    w.setAxisLabels("step", "loss");
    SeriesStyle raw;
    raw.color = ps::ui::faint(ps::ui::runColor(1));
    raw.faint = true;
    raw.legend = false;
    SeriesStyle smooth;
    smooth.color = ps::ui::runColor(1);
    SeriesStyle dashed;
    dashed.color = ps::ui::runColor(2);
    dashed.dashed = true;
    SeriesStyle scatter;
    scatter.color = ps::ui::runColor(3);
    scatter.scatter = true;
    w.setSeries("raw", "raw", ramp(200, 0.5), raw);
    w.setSeries("smooth", "run 1", ramp(200, 0.45), smooth);
    w.setSeries("eval", "run 2", ramp(200, 0.3), dashed);
    w.setSeries("pareto", "pareto", {{150, 10}, {20, 80}, {90, 40}}, scatter);
    w.addMarker({100, "K = 1%"});
    const QString path = dir.filePath("chart.png");
    QVERIFY(w.exportPng(path));
    QVERIFY(QFileInfo(path).size() > 0);
    QImage image(path);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 640 && image.height() >= 400);  // never shown: a sensible default size
    QVERIFY(distinctColours(image) > 10);
    // An empty chart exports its "no data yet" text; a file that cannot be written reports false.
    PlotWidget empty("Empty");
    QVERIFY(empty.exportPng(dir.filePath("empty.png")));
    QVERIFY(distinctColours(QImage(dir.filePath("empty.png"))) > 1);
    QVERIFY(!w.exportPng(dir.filePath("no/such/dir/chart.png")));
  }

  // SVG and PDF are the chart drawn as vectors by the same painter: its text stays text, its lines paths, no bitmap
  // inside; the page is the chart's size. A folder that does not exist is reported, not written around.
  void vectorExportsKeepTextAndLines() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    PlotWidget w("Compression error");
    w.resize(800, 500);  // never shown: laid out at its own size, as it is above 640 x 400
    w.setAxisLabels("step", "relative error");
    SeriesStyle line;
    line.color = ps::ui::runColor(1);
    w.setSeries("run1", "topk 10%", ramp(300, 0.4), line);
    w.addMarker({120, "K = 1%"});

    const QString svgPath = dir.filePath("chart.svg");
    QVERIFY(w.exportChart(svgPath, ChartFormat::Svg));
    QFile svgFile(svgPath);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QString svg = QString::fromUtf8(svgFile.readAll());
    QVERIFY(svg.contains(QStringLiteral("<svg")));
    QVERIFY(svg.contains(QStringLiteral("Compression error")));  // the title, as text
    QVERIFY(svg.contains(QStringLiteral("K = 1%")));             // the marker's label
    QVERIFY(svg.contains(QStringLiteral("topk 10%")));           // the legend
    QVERIFY(svg.contains(QStringLiteral("<path")) || svg.contains(QStringLiteral("<polyline")));
    QVERIFY2(!svg.contains(QStringLiteral("<image")), "a vector export holds no bitmap");
    QVERIFY(svg.contains(QStringLiteral("viewBox=\"0 0 800 500\"")));
    QXmlStreamReader xml(svg);  // parsed back: well-formed XML, an <svg> root
    QString root;
    while (!xml.atEnd())
      if (xml.readNext() == QXmlStreamReader::StartElement && root.isEmpty()) root = xml.name().toString();
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QStringLiteral("svg"));

    const QString pdfPath = dir.filePath("chart.pdf");
    QVERIFY(w.exportChart(pdfPath, ChartFormat::Pdf));
    QFile pdfFile(pdfPath);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    const QByteArray pdf = pdfFile.readAll();
    QVERIFY(pdf.startsWith("%PDF-"));
    // Parsed back as a reader finds its objects: startxref points at the cross-reference table, and every object it
    // lists as in use starts where the table says ("N 0 obj").
    const int startxref = pdf.lastIndexOf("startxref");
    QVERIFY(startxref > 0);
    const qint64 xrefAt = pdf.mid(startxref + 9).trimmed().split('\n').front().trimmed().toLongLong();
    QVERIFY(pdf.mid(xrefAt, 4) == "xref");
    const QList<QByteArray> table = pdf.mid(xrefAt).split('\n');
    const QList<QByteArray> section = table[1].trimmed().split(' ');
    const int first = section[0].toInt(), count = section[1].toInt();
    QVERIFY(count > 3);
    int inUse = 0;
    for (int i = 0; i < count; ++i) {
      const QList<QByteArray> entry = table[2 + i].trimmed().split(' ');
      if (entry.value(2) != "n") continue;
      const qint64 at = entry[0].toLongLong();
      QVERIFY2(pdf.mid(at).startsWith(QByteArray::number(first + i) + " 0 obj"),
               qPrintable(QStringLiteral("object %1 is not at %2").arg(first + i).arg(at)));
      ++inUse;
    }
    QVERIFY(inUse > 3);
    QVERIFY(!pdf.contains("/Subtype /Image"));
    // 800 x 500 pixels at the screen's resolution, in points.
    const double dpi = w.logicalDpiY() > 0 ? w.logicalDpiY() : 96;
    const QByteArray box = QByteArray("/MediaBox [0 0 ") + QByteArray::number(800 * 72.0 / dpi, 'f', 0);
    QVERIFY2(
        pdf.contains(box) || pdf.contains(QByteArray("/MediaBox [0 0 ") + QByteArray::number(800 * 72.0 / dpi, 'f', 2)),
        pdf.left(pdf.indexOf("/MediaBox") + 40).right(40).constData());

    QCOMPARE(ps::ui::chartFormatOf(QStringLiteral("a/b/Chart.PDF")), std::optional(ChartFormat::Pdf));
    QCOMPARE(ps::ui::chartFormatOf(QStringLiteral("chart.svg")), std::optional(ChartFormat::Svg));
    QVERIFY(!ps::ui::chartFormatOf(QStringLiteral("chart.gif")));
    QVERIFY(!w.exportChart(dir.filePath("no/such/dir/chart.svg"), ChartFormat::Svg));
    QVERIFY(!w.exportChart(dir.filePath("no/such/dir/chart.pdf"), ChartFormat::Pdf));
  }

  // A band fills the area between its two edges in its colour, under the lines; without fillTo nothing is filled.
  void aBandFillsBetweenItsEdges() {
    QTemporaryDir dir;
    const auto render = [&](bool band) {
      PlotWidget w("Band");
      w.resize(800, 500);
      SeriesStyle edge;
      edge.color = QColor(200, 40, 40);
      edge.faint = true;
      edge.legend = false;
      w.setSeries("hi", QString(), {{0, 10}, {10, 10}}, edge);
      if (band) edge.fillTo = "hi";
      w.setSeries("lo", QString(), {{0, 0}, {10, 0}}, edge);
      const QString path = dir.filePath(band ? "band.png" : "edges.png");
      return w.exportPng(path) ? QImage(path).convertToFormat(QImage::Format_RGB32) : QImage();
    };
    const QImage with = render(true), without = render(false);
    QVERIFY(!with.isNull() && with.size() == without.size());
    int reddish = 0, changed = 0;
    for (int y = 0; y < with.height(); ++y)
      for (int x = 0; x < with.width(); ++x) {
        const QColor a = with.pixelColor(x, y), b = without.pixelColor(x, y);
        if (a == b) continue;
        ++changed;
        reddish += a.red() > a.green() + 10 && a.red() > a.blue() + 10;
      }
    // Most of the plot area (about 700 x 400 pixels of 800 x 500) lies between the two edges.
    QVERIFY2(changed > with.width() * with.height() / 3, qPrintable(QString::number(changed)));
    QVERIFY(reddish > changed * 9 / 10);
  }

  // The legend sits below the plot area, so no entry can hide a data point; with more series than three rows hold,
  // the last entry counts the rest.
  void legendNeverCoversData() {
    PlotWidget w("t");
    w.resize(640, 400);
    for (int i = 0; i < 4; ++i)
      w.setSeries(QStringLiteral("s%1").arg(i), QStringLiteral("a run with a long name %1").arg(i),
                  {{0, 10.0 + i}, {50, 5.0}, {100, 0.0 - i}}, SeriesStyle{});
    const QRectF plot = w.plotArea();
    auto boxes = w.legendBoxes();
    QCOMPARE(boxes.size(), size_t(4));
    for (size_t i = 0; i < boxes.size(); ++i) {
      QVERIFY2(!boxes[i].intersects(plot), qPrintable(QString::number(i)));
      QVERIFY(QRectF(0, 0, 640, 400).contains(boxes[i]));
      for (size_t j = i + 1; j < boxes.size(); ++j) QVERIFY(!boxes[i].intersects(boxes[j]));
    }
    QVERIFY(!w.grab().isNull());

    for (int i = 4; i < 40; ++i)
      w.setSeries(QStringLiteral("s%1").arg(i), QStringLiteral("a run with a long name %1").arg(i),
                  {{0, double(i)}, {100, 0.0}}, SeriesStyle{});
    boxes = w.legendBoxes();
    QVERIFY(boxes.size() < 40);
    std::set<double> rows;
    for (const QRectF& b : boxes) {
      QVERIFY(!b.intersects(w.plotArea()));
      rows.insert(b.top());
    }
    QVERIFY2(rows.size() <= 3, "at most three rows of legend");
    QVERIFY(w.plotArea().height() > 200);  // the plot keeps most of the height

    const double withLegend = w.plotArea().height();
    w.setLegendVisible(false);
    QVERIFY(w.legendBoxes().empty());
    QVERIFY(w.plotArea().height() > withLegend);
    QCOMPARE(w.legendLabels().size(), 40);  // still named: a shared legend reads them
  }

  // A pause and its resume at one step, and a change a step later: every label reads, none over another, each
  // beside its line and inside the plot area.
  void markersAtOneStepAllRead() {
    PlotWidget w("t");
    w.resize(640, 400);
    w.setSeries("loss", "loss", {{0, 2.0}, {1000, 0.5}}, SeriesStyle{});
    w.addMarker(Marker{500, QStringLiteral("pause")});
    w.addMarker(Marker{500, QStringLiteral("resume")});
    w.addMarker(Marker{501, QStringLiteral("compression.forward.k: 0.1 → 0.05")});
    w.addMarker(Marker{900, QStringLiteral("pause")});
    const auto boxes = w.markerLabelBoxes();
    QCOMPARE(boxes.size(), size_t(4));
    const QRectF plot = w.plotArea();
    for (size_t i = 0; i < boxes.size(); ++i) {
      QVERIFY2(plot.contains(boxes[i]), qPrintable(QString::number(i)));
      for (size_t j = i + 1; j < boxes.size(); ++j)
        QVERIFY2(!boxes[i].intersects(boxes[j]), qPrintable(QStringLiteral("%1 and %2").arg(i).arg(j)));
    }
    QCOMPARE(boxes[3].top(), boxes[0].top());  // a marker far from the others starts at the top again
    QVERIFY(!w.grab().isNull());
  }

  // The crosshair names x in the axis's words and lists only the series that have data there: before the first
  // evaluation there is no evaluation value to read.
  void theCrosshairReadsOnlyWhereASeriesHasData() {
    PlotWidget w("Accuracy");
    w.resize(640, 400);
    w.setAxisLabels(QStringLiteral("Step"), QStringLiteral("accuracy"));
    std::vector<QPointF> train;
    for (int step = 1; step <= 500; ++step) train.emplace_back(step, 0.5 + step / 2000.0);
    w.setSeries("train", "train", train, SeriesStyle{});
    w.setSeries("eval", "eval", {{200, 0.8}, {400, 0.9}}, SeriesStyle{});
    const QRectF plot = w.plotArea();
    const auto pixelOf = [&](double step) {
      const auto [x0, x1] = std::make_pair(w.points("train").front().x(), w.points("train").back().x());
      return plot.left() + (step - x0) / (x1 - x0) * plot.width();
    };
    QStringList early = w.crosshairLines(pixelOf(50));
    QVERIFY2(early.first().startsWith(QStringLiteral("Step: ")), qPrintable(early.join(" | ")));
    QCOMPARE(early.size(), 2);  // train only: the first evaluation is at step 200
    QVERIFY(early[1].startsWith(QStringLiteral("train: ")));
    const QStringList later = w.crosshairLines(pixelOf(300));
    QCOMPARE(later.size(), 3);
    QVERIFY2(later[1].startsWith(QStringLiteral("eval: ")), qPrintable(later.join(" | ")));  // highest first
  }

  // A log x axis spaces decades evenly: bandwidths from 1 to 10000 Mbit/s put 100 in the middle, where the
  // crosshair reads it and a marker there is drawn; zero and negative x are left off the range.
  void aLogXAxisSpacesDecadesEvenly() {
    PlotWidget w("Break-even");
    w.resize(640, 400);
    w.setAxisLabels(QStringLiteral("Mbit/s"), QStringLiteral("s"));
    w.setLogX(true);
    QVERIFY(w.logX());
    w.setSeries("a", "a", {{0, 9}, {1, 5}, {10, 4}, {100, 3}, {1000, 2}, {10000, 1}}, SeriesStyle{});
    w.addMarker({100, QStringLiteral("crossing")});
    const QRectF plot = w.plotArea();
    const auto pixelOf = [&](double x) { return plot.left() + std::log10(x) / 4 * plot.width(); };
    QCOMPARE(w.crosshairLines(pixelOf(100)).first(), QStringLiteral("Mbit/s: 100"));
    QCOMPARE(w.crosshairLines(pixelOf(1000)).first(), QStringLiteral("Mbit/s: 1k"));
    QVERIFY2(w.crosshairLines(pixelOf(10)).contains(QStringLiteral("a: 4")),
             qPrintable(w.crosshairLines(pixelOf(10)).join(" | ")));
    const auto labels = w.markerLabelBoxes();
    QCOMPARE(labels.size(), size_t(1));
    QVERIFY2(std::abs(labels[0].left() - 2 - (plot.left() + plot.width() / 2)) < 1,
             qPrintable(QString::number(labels[0].left())));
    QVERIFY(!w.grab().isNull());
    w.setLogX(false);  // back to linear: 100 is near the left
    QVERIFY(w.crosshairLines(plot.left() + plot.width() / 2).first().startsWith(QStringLiteral("Mbit/s: 5")));
  }

  // PNG exports render at the scale chosen (2x the screen until one is): the same chart in twice the pixels, its
  // text and lines scaled with it; export dialogs open in the folder the last export of their kind went to.
  void pngExportsAtTheChosenScaleAndDialogsRememberTheirFolder() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().remove(QStringLiteral("exports"));
    QCOMPARE(ps::ui::exports::pngScale(), 2);
    QTemporaryDir dir;
    PlotWidget w("Loss");
    w.setSeries("loss", "loss", ramp(100, 0.5), SeriesStyle{});
    const QString path = dir.filePath("loss.png");
    QVERIFY(w.exportPng(path));
    const QSize twice = QImage(path).size();
    ps::ui::exports::setPngScale(1);
    QVERIFY(w.exportPng(path));
    const QSize once = QImage(path).size();
    QVERIFY(once.width() >= 640 && once.height() >= 400);  // never shown: laid out at a sensible size
    QCOMPARE(twice, once * 2);
    ps::ui::exports::setPngScale(9);
    QCOMPARE(ps::ui::exports::pngScale(), 3);  // clamped to what the menu offers

    QVERIFY(ps::ui::exports::folder(QStringLiteral("csv")) != dir.path());
    ps::ui::exports::rememberFolder(QStringLiteral("csv"), dir.filePath("run-3.csv"));
    QCOMPARE(ps::ui::exports::folder(QStringLiteral("csv")), QFileInfo(dir.path()).absoluteFilePath());
    QCOMPARE(ps::ui::exports::suggestedPath(QStringLiteral("csv"), "run-4.csv"),
             QDir(dir.path()).filePath("run-4.csv"));
    QVERIFY(ps::ui::exports::folder(QStringLiteral("charts")) !=
            ps::ui::exports::folder(QStringLiteral("csv")));  // one per kind
    const QString gone = dir.filePath("gone");
    QVERIFY(QDir().mkpath(gone));
    ps::ui::exports::rememberFolder(QStringLiteral("charts"), gone);
    QCOMPARE(ps::ui::exports::folder(QStringLiteral("charts")), gone);
    QVERIFY(QDir(gone).removeRecursively());
    QVERIFY(ps::ui::exports::folder(QStringLiteral("charts")) != gone);  // a folder that went away is not offered
    QSettings().remove(QStringLiteral("exports"));
  }

  void barsStandOnZeroOverTheirCategory() {
    QTemporaryDir dir;
    PlotWidget w("Time to target");
    w.resize(600, 400);
    w.setCategories({"dense", "topk", "never"});
    SeriesStyle bar;
    bar.bars = true;
    bar.legend = false;  // the legend's swatches would sit in the last column
    bar.color = QColor(200, 30, 30);
    w.setSeries("dense", "dense", {{0, 40}}, bar);
    bar.color = QColor(30, 30, 200);
    w.setSeries("topk", "topk", {{1, 10}}, bar);
    const auto [lo, hi] = w.visibleYRange();
    QVERIFY(lo <= 0 && hi >= 40);  // zero is in view: bars stand on it
    QVERIFY(w.exportPng(dir.filePath("bars.png")));
    const QImage image(dir.filePath("bars.png"));
    // Columns through the middle of each category: the first holds a red bar, the second a blue one (four times
    // shorter), the third none.
    auto count = [&](int x, auto test) {
      int n = 0;
      for (int y = 0; y < image.height(); ++y) n += test(QColor(image.pixel(x, y)));
      return n;
    };
    const auto red = [](const QColor& c) { return c.red() > 150 && c.green() < 120 && c.blue() < 120; };
    const auto blue = [](const QColor& c) { return c.blue() > 150 && c.red() < 120 && c.green() < 120; };
    const int left = 70, right = image.width() - 14, third = (right - left) / 3;  // about the plot's columns
    const int redRows = count(left + third / 2, red), blueRows = count(left + third + third / 2, blue);
    QVERIFY2(redRows > 100, qPrintable(QString::number(redRows)));
    QVERIFY2(blueRows > 15 && blueRows < redRows / 2, qPrintable(QString::number(blueRows)));
    QCOMPARE(count(left + 2 * third + third / 2, red) + count(left + 2 * third + third / 2, blue), 0);
  }

  void resetZoomFitsTheDataAndTellsLinkedCharts() {
    PlotWidget w("t");
    w.setSeries("s", "s", ramp(100), SeriesStyle{});
    w.setXRange(std::make_pair(10.0, 20.0));
    QSignalSpy spy(&w, &PlotWidget::xRangeChanged);
    w.resetZoom();
    QVERIFY(!w.xRange());
    QCOMPARE(spy.count(), 1);
    QVERIFY(std::isnan(spy.at(0).at(0).toDouble()));
    QVERIFY(std::isnan(spy.at(0).at(1).toDouble()));
    const auto [lo, hi] = w.visibleYRange();  // the whole ramp again
    QVERIFY(lo <= 0 && hi >= 99);
  }

  void dragZoomsAndDoubleClickResets() {
    PlotWidget w("t");
    w.setSeries("s", "s", ramp(1000), SeriesStyle{});
    w.resize(600, 400);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy spy(&w, &PlotWidget::xRangeChanged);

    QTest::mousePress(&w, Qt::LeftButton, {}, QPoint(150, 200));
    QTest::mouseMove(&w, QPoint(300, 210));
    QTest::mouseMove(&w, QPoint(450, 220));
    QTest::mouseRelease(&w, Qt::LeftButton, {}, QPoint(450, 220));
    QCOMPARE(spy.count(), 1);
    const double lo = spy.at(0).at(0).toDouble(), hi = spy.at(0).at(1).toDouble();
    QVERIFY(lo < hi);
    QVERIFY(lo > 0 && hi < 999);
    QVERIFY(w.xRange());
    QCOMPARE(w.xRange()->first, lo);
    QCOMPARE(w.xRange()->second, hi);

    // A click (under 4 px of travel) does not zoom.
    QTest::mousePress(&w, Qt::LeftButton, {}, QPoint(300, 200));
    QTest::mouseRelease(&w, Qt::LeftButton, {}, QPoint(302, 200));
    QCOMPARE(spy.count(), 1);

    QTest::mouseDClick(&w, Qt::LeftButton, {}, QPoint(300, 200));
    QCOMPARE(spy.count(), 2);
    QVERIFY(std::isnan(spy.at(1).at(0).toDouble()));
    QVERIFY(std::isnan(spy.at(1).at(1).toDouble()));
    QVERIFY(!w.xRange());

    // Hovering draws the crosshair; a paint with it must not trip.
    QTest::mouseMove(&w, QPoint(320, 180));
    QVERIFY(!w.grab().isNull());
  }

  void millionPointsPaint() {
    std::vector<QPointF> pts;
    pts.reserve(1000000);
    for (int i = 0; i < 1000000; ++i) pts.emplace_back(i, std::sin(i * 1e-4) + (i % 7) * 0.01);
    PlotWidget w("big");
    w.setSeries("s", "s", std::move(pts), SeriesStyle{});
    for (int i = 0; i < 100000; ++i) w.appendPoint("live", QPointF(i * 10.0, i * 1e-5));
    QCOMPARE(w.pointCount(), 1100000);
    w.resize(800, 500);
    QImage image(800, 500, QImage::Format_ARGB32);
    w.render(&image);
    QVERIFY(distinctColours(image) > 3);
    w.setXRange(std::make_pair(1000.0, 2000.0));
    w.render(&image);
    QVERIFY(distinctColours(image) > 3);
  }
};

QTEST_MAIN(PlotWidgetTest)
#include "PlotWidgetTest.moc"
