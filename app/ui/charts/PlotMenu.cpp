// A chart's context menu: the per-chart actions a user expects (save just this chart, log y, ignore outliers, reset
// zoom, the size PNG exports render at).
#include "app/ui/charts/ExportSettings.h"
#include "app/ui/charts/PlotWidgetImpl.h"

#include <QFileDialog>
#include <QMenu>
#include <QRegularExpression>
#include <QToolTip>

namespace ps::ui {

QString chartFileStem(const QString& title) {
  QString stem = title.toLower();
  stem.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  while (stem.startsWith(QLatin1Char('-'))) stem.remove(0, 1);
  while (stem.endsWith(QLatin1Char('-'))) stem.chop(1);
  return stem.isEmpty() ? QStringLiteral("chart") : stem;
}

void runChartMenu(PlotWidget& plot, const QPoint& globalPos) {
  QMenu menu(&plot);
  QAction* save = menu.addAction(PlotWidget::tr("Save Chart…"));
  save->setToolTip(PlotWidget::tr("PNG, or SVG and PDF as vectors for papers"));
  QAction* log = menu.addAction(PlotWidget::tr("Logarithmic y"));
  log->setCheckable(true);
  log->setChecked(plot.logY());
  QAction* outliers = menu.addAction(PlotWidget::tr("Ignore Outliers"));
  outliers->setToolTip(
      PlotWidget::tr("Scale y to the bulk of each dense series; points left out are marked at the edge"));
  outliers->setCheckable(true);
  outliers->setChecked(plot.ignoreOutliers());
  QMenu* sizes = menu.addMenu(PlotWidget::tr("PNG Size"));
  sizes->setToolTipsVisible(true);
  for (int scale : {1, 2, 3}) {
    QAction* a = sizes->addAction(PlotWidget::tr("%1× the screen").arg(scale));
    a->setCheckable(true);
    a->setChecked(exports::pngScale() == scale);
    a->setData(scale);
    a->setToolTip(PlotWidget::tr("Every PNG chart export, here and in Export Charts, renders at this scale"));
  }
  QAction* reset = menu.addAction(PlotWidget::tr("Reset Zoom"));
  reset->setEnabled(plot.xRange().has_value());
  QAction* chosen = menu.exec(globalPos);
  if (chosen == save) {
    const QString png = PlotWidget::tr("PNG image (*.png)"), svg = PlotWidget::tr("SVG vector image (*.svg)"),
                  pdf = PlotWidget::tr("PDF document (*.pdf)");
    QString filter = png;
    const QString suggested = exports::suggestedPath(QStringLiteral("charts"), chartFileStem(plot.title()) + ".png");
    QString path = QFileDialog::getSaveFileName(&plot, PlotWidget::tr("Save chart"), suggested,
                                                QStringList{png, svg, pdf}.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    // The name's suffix decides; without one, the chosen filter does (and gives the name its suffix).
    std::optional<ChartFormat> format = chartFormatOf(path);
    if (!format) {
      format = filter == svg ? ChartFormat::Svg : filter == pdf ? ChartFormat::Pdf : ChartFormat::Png;
      path += QLatin1Char('.') + chartSuffix(*format);
    }
    if (!plot.exportChart(path, *format))
      QToolTip::showText(globalPos, PlotWidget::tr("Could not write %1: check the folder's permissions.").arg(path),
                         &plot);
    else
      exports::rememberFolder(QStringLiteral("charts"), path);
  } else if (chosen == log) {
    plot.setLogY(log->isChecked());
  } else if (chosen == outliers) {
    plot.setIgnoreOutliers(outliers->isChecked());
  } else if (chosen && chosen->parent() == sizes) {
    exports::setPngScale(chosen->data().toInt());
  } else if (chosen == reset) {
    plot.resetZoom();
  }
}

}  // namespace ps::ui
