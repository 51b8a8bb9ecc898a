// PlotWidget's files: the chart as it is now, painted by the same code that paints it on screen, onto a bitmap (PNG)
// or a vector device (SVG, PDF). The vector devices get the screen's resolution, so text and line widths keep the
// sizes they have in the app; a PDF page is the chart's size in points.
#include "app/ui/charts/PlotWidget.h"
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

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

bool PlotWidget::exportPng(const QString& path) {
  return exportChart(path, ChartFormat::Png);
}

bool PlotWidget::exportChart(const QString& path, ChartFormat format) {
  const QSize size = effectiveSize(this);
  const PlotFrame frame = d_->computeFrame(size, font());
  const auto draw = [&](QPaintDevice& device) {
    QPainter p(&device);
    if (!p.isActive()) return false;
    p.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
    d_->paint(p, frame, size, font(), palette(), /*interactive=*/false);
    return p.end();
  };
  if (format == ChartFormat::Png) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    return draw(image) && image.save(path, "PNG");
  }
  // Neither vector device says when it cannot write its file: check the folder first, and the file after.
  QFile probe(path);
  if (!probe.open(QIODevice::WriteOnly)) return false;
  probe.close();
  const int dpi = logicalDpiY() > 0 ? logicalDpiY() : 96;
  bool painted = false;
  if (format == ChartFormat::Svg) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(dpi);
    svg.setTitle(title());
    svg.setDescription(QStringLiteral("PipeSqueeze chart"));
    painted = draw(svg);
  } else {
    QPdfWriter pdf(path);
    pdf.setResolution(dpi);
    pdf.setPageSize(QPageSize(QSizeF(size) * 72.0 / dpi, QPageSize::Point, QString(), QPageSize::ExactMatch));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(title());
    pdf.setCreator(QStringLiteral("PipeSqueeze"));
    painted = draw(pdf);
  }
  return painted && QFileInfo(path).size() > 0;
}

}  // namespace ps::ui
