// A chart's files: the chart as it is now, painted by the same code that paints it on screen, onto a bitmap (PNG)
// or a vector device (SVG, PDF), written atomically. The vector devices get the screen's resolution, so text and line
// widths keep the sizes they have in the app; a PDF page is the chart's size in points.
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>

namespace ps::ui {

QString chartSuffix(ChartFormat format) {
  switch (format) {
    case ChartFormat::Svg:
      return QStringLiteral("svg");
    case ChartFormat::Pdf:
      return QStringLiteral("pdf");
    default:
      return QStringLiteral("png");
  }
}

std::optional<ChartFormat> chartFormatOf(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  for (ChartFormat f : {ChartFormat::Png, ChartFormat::Svg, ChartFormat::Pdf})
    if (suffix == chartSuffix(f)) return f;
  return std::nullopt;
}

bool writeChartFile(PlotData& chart, const ChartPage& page, const QString& path, ChartFormat format) {
  const QSize size = page.size;
  const PlotFrame frame = layOutPlot(chart, size, page.font);
  const auto draw = [&](QPaintDevice& device) {
    QPainter p(&device);
    if (!p.isActive()) return false;
    p.fillRect(QRect(QPoint(0, 0), size), page.palette.color(QPalette::Base));
    PlotPainter(chart, nullptr).paint(p, frame, size, page.font, page.palette);  // no pointer in an export
    return p.end();
  };
  // Every format is written whole or not at all: an existing file stays until the new one is complete.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  bool painted = false;
  const int dpi = page.dpi > 0 ? page.dpi : 96;
  if (format == ChartFormat::Png) {
    const int scale = std::max(1, page.scale);
    QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);  // drawn at the chart's size, in `scale` times the pixels
    painted = draw(image) && image.save(&file, "PNG");
  } else if (format == ChartFormat::Svg) {
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(dpi);
    svg.setTitle(page.title);
    svg.setDescription(QStringLiteral("PipeSqueeze chart"));
    painted = draw(svg);
  } else {
    QPdfWriter pdf(&file);
    pdf.setResolution(dpi);
    pdf.setPageSize(QPageSize(QSizeF(size) * 72.0 / dpi, QPageSize::Point, QString(), QPageSize::ExactMatch));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(page.title);
    pdf.setCreator(QStringLiteral("PipeSqueeze"));
    painted = draw(pdf);
  }
  if (!painted) return false;  // the file is discarded, the old one kept
  return file.commit();
}

}  // namespace ps::ui
