// PlotWidget's context menu: the per-chart actions a user expects (save just this chart, log y, reset zoom).
#include "app/ui/charts/PlotWidget.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QMenu>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QToolTip>

#include <cmath>

namespace ps::ui {

QString chartFileStem(const QString& title) {
  QString stem = title.toLower();
  stem.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  while (stem.startsWith(QLatin1Char('-'))) stem.remove(0, 1);
  while (stem.endsWith(QLatin1Char('-'))) stem.chop(1);
  return stem.isEmpty() ? QStringLiteral("chart") : stem;
}

void PlotWidget::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  QAction* save = menu.addAction(tr("Save Chart…"));
  save->setToolTip(tr("PNG, or SVG and PDF as vectors for papers"));
  QAction* log = menu.addAction(tr("Logarithmic y"));
  log->setCheckable(true);
  log->setChecked(logY());
  QAction* reset = menu.addAction(tr("Reset Zoom"));
  reset->setEnabled(xRange().has_value());
  QAction* chosen = menu.exec(event->globalPos());
  if (chosen == save) {
    const QString png = tr("PNG image (*.png)"), svg = tr("SVG vector image (*.svg)"), pdf = tr("PDF document (*.pdf)");
    QString filter = png;
    const QString suggested = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation) + QLatin1Char('/') +
                              chartFileStem(title()) + ".png";
    QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), suggested,
                                                QStringList{png, svg, pdf}.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return;
    // The name's suffix decides; without one, the chosen filter does (and gives the name its suffix).
    std::optional<ChartFormat> format = chartFormatOf(path);
    if (!format) {
      format = filter == svg ? ChartFormat::Svg : filter == pdf ? ChartFormat::Pdf : ChartFormat::Png;
      path += QLatin1Char('.') + chartSuffix(*format);
    }
    if (!exportChart(path, *format))
      QToolTip::showText(event->globalPos(), tr("Could not write %1: check the folder's permissions.").arg(path), this);
  } else if (chosen == log) {
    setLogY(log->isChecked());
  } else if (chosen == reset) {
    setXRange(std::nullopt);
    Q_EMIT xRangeChanged(std::nan(""), std::nan(""));  // linked charts reset too
  }
}

}  // namespace ps::ui
